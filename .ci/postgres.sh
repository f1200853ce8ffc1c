#!/usr/bin/env bash
# A scratch PostgreSQL 15 cluster on loopback, for the PostgreSQL test run (DESIGN.md,
# "Local services").
#   eval "$(bash .ci/postgres.sh start)"   installs postgresql-15 if missing, starts a cluster
#                                          (port 54329, or the next free one), creates the
#                                          database service_test and prints
#                                          export SERVICE_TEST_DATABASE_URL=postgres://…
#   bash .ci/postgres.sh stop              stops the cluster and removes its folder
# Idempotent: start while running prints the same line again; stop while stopped does nothing.
# As root the cluster runs as user postgres (initdb refuses root); otherwise as the caller.
set -euo pipefail

BIN=/usr/lib/postgresql/15/bin
STATE="${TMPDIR:-/tmp}/service-postgres.state" # two lines: cluster folder, port
FIRST_PORT=54329

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

print_url() { echo "export SERVICE_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$1/service_test"; }

running() {
  [ -f "$STATE" ] || return 1
  local dir port
  { read -r dir; read -r port; } <"$STATE"
  [ -d "$dir" ] && as_owner "$BIN/pg_ctl" -D "$dir" status >/dev/null 2>&1 && echo "$port"
}

start() {
  local port
  if port=$(running); then
    print_url "$port"
    return
  fi
  if [ ! -x "$BIN/initdb" ]; then
    echo "installing postgresql-15" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
  fi
  port=$FIRST_PORT
  while port_taken "$port"; do port=$((port + 1)); done
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/service-postgres.XXXXXX")
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  as_owner "$BIN/initdb" -D "$dir" -A trust -U postgres --no-sync >/dev/null
  # fsync off: a scratch cluster for tests, thrown away on stop.
  as_owner "$BIN/pg_ctl" -D "$dir" -l "$dir/log" -w \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c fsync=off -c max_connections=300" start >/dev/null
  printf '%s\n%s\n' "$dir" "$port" >"$STATE"
  as_owner "$BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres service_test
  print_url "$port"
}

stop() {
  [ -f "$STATE" ] || return 0
  local dir port
  { read -r dir; read -r port; } <"$STATE"
  if [ -d "$dir" ]; then
    as_owner "$BIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
  fi
  rm -f "$STATE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
