# syntax=docker/dockerfile:1
# The service-idp container image (docs/deployment.md). Build from the repository root:
#   docker build -t service-idp .
# CI has no Docker engine: test/deploy.test.ts parses this file and runs its COPY and RUN steps
# in a scratch folder with the same Node, then starts the result as CMD says and probes it with
# the HEALTHCHECK below. Keep every RUN a plain shell command on paths this file names.

# ---- build: the whole workspace from the lockfile, compiled, then pruned to what runs ----
FROM node:20.20.2-bookworm-slim AS build
# better-sqlite3 compiles from source where its prebuilt binary cannot be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The manifests first, so the install layer is reused until a dependency changes.
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/web/package.json packages/web/
COPY packages/oauth-client/package.json packages/oauth-client/
COPY packages/hosted/package.json packages/hosted/
COPY packages/console/package.json packages/console/
COPY packages/idp/package.json packages/idp/
COPY examples/demo/package.json examples/demo/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
# Production dependencies only; then the folder the image runs: service-idp's package (bin,
# dist; it bundles the workspace code it uses, and the dependencies npm kept beside it rather
# than hoisted: altcha-lib, whose optional peers clash with the demo's) and node_modules,
# without the links to the other workspace packages and their binaries.
RUN npm prune --omit=dev --no-audit --no-fund \
  && mkdir -p out/packages/idp out/bin out/data \
  && cp -R packages/idp/package.json packages/idp/LICENSE packages/idp/bin packages/idp/dist out/packages/idp/ \
  && if [ -d packages/idp/node_modules ]; then cp -R packages/idp/node_modules out/packages/idp/ && rm -rf out/packages/idp/node_modules/.bin; fi \
  && cp -R node_modules out/node_modules \
  && find out/node_modules -maxdepth 1 -type l -delete \
  && rm -rf out/node_modules/.bin \
  && ln -s ../packages/idp/bin/service-idp.js out/bin/service-idp

# ---- runtime: Node and the pruned service, as the unprivileged `node` user (uid 1000) ----
FROM node:20.20.2-bookworm-slim
ENV NODE_ENV=production \
  SERVICE_IDP_HOST=0.0.0.0 \
  SERVICE_IDP_PORT=8080 \
  SERVICE_IDP_DATA=/data \
  PATH=/app/bin:$PATH
WORKDIR /app
COPY --from=build /src/out/bin ./bin
COPY --from=build /src/out/packages ./packages
COPY --from=build /src/out/node_modules ./node_modules
# The data folder (server secret; the SQLite database unless DATABASE_URL is set), owned by the
# service's user, and a volume so it outlives the container.
COPY --from=build --chown=node:node /src/out/data /data
USER node
VOLUME /data
EXPOSE 8080
# Ready when the database answers (GET /readyz 200). Node itself probes: the slim image has no curl.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SERVICE_IDP_PORT || 8080) + '/readyz').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself; `start` closes the listener, the
# background loops and the database, prints "service-idp stopped (SIGTERM)." and exits 0.
# Other commands: docker run --rm -v VOLUME:/data IMAGE users list (the arguments replace CMD),
# or in a running container: docker exec CONTAINER service-idp users list.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/packages/idp/bin/service-idp.js"]
CMD ["start"]
