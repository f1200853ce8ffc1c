/**
 * How the service runs: webhooks' delivery, sweeps, the database pool, the HTTP listener and
 * its caches, SQLite's checkpoints. Part of defaults.ts, which re-exports every name.
 */

/**
 * Event webhooks (webhooks/): each delivery attempt is one POST that must answer 2xx within
 * this time. 10 s: receivers should queue and answer at once (Standard Webhooks advice); a
 * slow one only delays its own endpoint's queue.
 */
export const WEBHOOK_REQUEST_TIMEOUT_MS = 10_000;
/**
 * A node's claim on a delivery lasts this long: longer than one attempt (the timeout) plus the
 * write that records its outcome, so a live node never loses its claim; a node killed mid
 * delivery hands it to another node after at most this long.
 */
export const WEBHOOK_LEASE_MS = 30_000;
/** Each node looks for due deliveries this often (and at once after recording a subscribed event). */
export const WEBHOOK_POLL_INTERVAL_MS = 1000;
/** Deliveries one node has in flight at most: a bound on its concurrent requests (a slow receiver holds only its own). */
export const WEBHOOK_CLAIM_BATCH = 20;
/**
 * Retries back off exponentially from the first delay, doubling up to the cap: 5, 10, 20, 40,
 * 80, 160 s, then every 300 s. The cap keeps a receiver that was down for an hour no more
 * than five minutes behind once it is back.
 */
export const WEBHOOK_RETRY_FIRST_DELAY_SECONDS = 5;
export const WEBHOOK_RETRY_MAX_DELAY_SECONDS = 5 * 60;
/**
 * A delivery is retried for this long after its event, then given up (the next event of the
 * same user then goes): a day covers a receiver's outage through a night or a redeploy.
 */
export const WEBHOOK_RETRY_WINDOW_HOURS = 24;
/**
 * An endpoint that has failed every attempt for this long (no 2xx in between) is disabled,
 * so a receiver that is gone stops costing requests; the operator sees why and re-enables it.
 * Three days: longer than the retry window, so a weekend outage never needs an operator.
 */
export const WEBHOOK_DISABLE_AFTER_FAILING_HOURS = 72;
/**
 * Nodes keep the endpoints' subscriptions in memory for this long, so an event nobody
 * subscribes to costs no extra statement; a change made on another node (or by the CLI)
 * reaches a node within this time, a change made on the node itself at once.
 */
export const WEBHOOK_SUBSCRIPTION_CACHE_MS = 5000;
/** Random bytes of a signing secret: 24 (192 bits), within Standard Webhooks' 24 to 64. */
export const WEBHOOK_SECRET_BYTES = 24;
/** Endpoints per service: deliveries fan out per endpoint, so keep the fan-out small. */
export const WEBHOOK_ENDPOINTS_MAX = 20;
/** The console's list of an endpoint's deliveries shows at most this many, newest first. */
export const WEBHOOK_DELIVERIES_LISTED = 100;
/** An endpoint URL, like a redirect URI. */
export const WEBHOOK_URL_MAX_LENGTH = 2000;
/** The last error kept on an endpoint (a status line or network error code, never a body). */
export const WEBHOOK_ERROR_MAX_LENGTH = 200;

/** Rows past their expiry are deleted this often. */
export const SWEEP_INTERVAL_SECONDS = 60;

/**
 * The sweep deletes at most this many rows of a table per statement, letting other work run
 * between statements: one statement over a minute of logins at 300/s (36,000 codes and
 * challenges) held SQLite's event loop for 86 ms (docs/performance.md, the soak).
 */
export const SWEEP_BATCH_ROWS = 1000;

/** PostgreSQL connections per node: enough for a node's concurrency, small enough for N nodes. */
export const DB_POOL_SIZE = 10;
/** PostgreSQL statement_timeout: every query here is a key lookup; a slow one means trouble. */
export const DB_STATEMENT_TIMEOUT_MS = 5000;
/** A node fails fast while PostgreSQL is unreachable: a request waits at most this long for a connection, then 503. */
export const DB_CONNECT_TIMEOUT_MS = 2000;
/** An idle pooled connection is closed after this long (the pool opens new ones on demand). */
export const DB_IDLE_TIMEOUT_MS = 30_000;

/** HTTP */
export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = '127.0.0.1';
/** The operator console's own listener (--console-port) binds here unless SERVICE_IDP_CONSOLE_HOST says otherwise. */
export const CONSOLE_LISTENER_HOST = '127.0.0.1';
export const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Entries of the in-process cache of immutable rows: client/user pairs already recorded as
 * signed in (a pair goes with its client or its user, whose ids are never reused). Users are
 * not cached: operators disable and delete them (users/). The bound only caps memory (the
 * cache empties when full).
 */
export const IMMUTABLE_ROW_CACHE_ENTRIES = 50_000;

/**
 * The browser scope's CORS check knows every client's origins from a per-node cache; an origin
 * it does not know makes the request wait for a reload, and reloads run at most this often: a
 * client registered a moment ago (by the CLI, the admin API or another node) is answered within
 * this time, and a flood of made-up origins costs one read per interval.
 */
export const ORIGINS_RELOAD_INTERVAL_MS = 1000;

/**
 * The device-challenge request may take its client from a per-process cache of client records
 * (by publishable key) this young, instead of reading it: a challenge is a nonce bound to the
 * client's id and is worth nothing until an authenticate request, which reads the client
 * afresh, spends it. A client deleted or changed on this node leaves the cache at once; on
 * another node (or by the CLI) within this time, during which that node still hands out
 * challenges for it and nothing more (docs/security.md).
 */
export const BROWSER_CLIENT_CACHE_MS = 5000;
/** Entries of that cache (client records; the oldest goes first when full). */
export const BROWSER_CLIENT_CACHE_ENTRIES = 1000;

/** SQLite: a worker thread checkpoints the WAL this often (storage/database.ts). */
export const SQLITE_CHECKPOINT_INTERVAL_MS = 200;
/** SQLite: the main connection checkpoints itself only past this many WAL pages (4 KiB each). */
export const SQLITE_BACKSTOP_CHECKPOINT_PAGES = 20_000;
