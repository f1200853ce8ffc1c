/**
 * Test harness: a real service on a random loopback port with an in-memory SQLite database
 * (or, when SERVICE_TEST_DATABASE_URL is set, a fresh schema in that PostgreSQL database),
 * a registered client, and a fetch that behaves like a browser page on the client's origin.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CompactSign, exportJWK, generateKeyPair, type CryptoKey as JoseKey } from 'jose';
// Every test file imports this module and most use few of its helpers: the libraries only some
// of them need (the CLI, the browser library and its IndexedDB, pg, smtp-server, the delegation
// client) are imported by those helpers when called, a quarter of a second of CPU per file less.
import type { ServiceClient } from 'service-web';
import type { SMTPServer } from 'smtp-server';
import { DB_POOL_SIZE, DB_STATEMENT_TIMEOUT_MS, SEND_SPACING_PER_PURPOSE } from '../../src/defaults.js';
import { CONTRACT_CHECK_ENV, type ContractViolation, describeViolation } from '../../src/http/contract-check.js';
import { type ContextOptions, loadConfig, type RunningService, startService } from '../../src/index.js';
import type { Mailer } from '../../src/mail/mailer.js';
import type { SmsTransport } from '../../src/sms/transport.js';
import { openPostgres, openSqlite } from '../../src/storage/database.js';
import type { Db } from '../../src/storage/schema.js';
import { testSigningKeys } from './signing-keys.js';

export const APP_ORIGIN = 'http://app.test:3000';

/**
 * The OpenAPI contract (http/contract-check.ts): every answer of every service a test starts is
 * checked against the document. startTestService's services report here, and the test during
 * which an answer broke the contract fails (the hook below); services a test file starts
 * itself with startService are checked through the environment (stderr, and the file fails).
 */
const contractViolations: ContractViolation[] = [];
process.env[CONTRACT_CHECK_ENV] = '1';

function takeContractViolations(): Error | undefined {
  if (contractViolations.length === 0) return undefined;
  const lines = contractViolations.splice(0).map(describeViolation);
  return new Error(`answers the OpenAPI document does not declare:\n${lines.join('\n')}`);
}

afterEach(() => {
  const violations = takeContractViolations();
  if (violations) throw violations;
});

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a `service-idp` command line in this process (src/cli/run.ts, what the bin runs) with a
 * bare environment (plus `env`), as an operator's shell would: its exit status and what it wrote.
 * A child process per command cost most of the CLI tests' time; runBuiltCli keeps the shipped
 * bin covered, and `start` runs there (it keeps running: refused here).
 */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  let stopStarted: ((signal: NodeJS.Signals) => Promise<void>) | undefined;
  const { runCli: runCliInProcess } = await import('../../src/cli/run.js');
  const code = await runCliInProcess(args, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
    env: { PATH: process.env.PATH ?? '', ...env },
    isTTY: false,
    onStopSignal: (stop) => {
      stopStarted = stop;
    },
  });
  if (code < 0) {
    await stopStarted?.('SIGTERM');
    throw new Error(`runCli ${args.join(' ')}: the command keeps running; run it with runBuiltCli`);
  }
  return { code, stdout, stderr };
}

/** Runs the built `service-idp` (dist/cli.js) in a child process with a bare environment (plus `env`): the shipped bin. */
export function runBuiltCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A clock for a test service; `tick()` moves it past the per-purpose send spacing, so sign-ins never throttle each other. */
export function sendClock(start = Date.now()) {
  const clock = {
    at: start,
    now: () => clock.at,
    tick: () => {
      clock.at += (SEND_SPACING_PER_PURPOSE[0].windowSeconds + 1) * 1000;
    },
  };
  return clock;
}

export interface TestService extends RunningService {
  clientId: string;
  publishableKey: string;
  secretKey: string;
  tokenUrl: string;
  jwksUrl: string;
  /** PostgreSQL runs: the schema of its tables (a second node opens its own pool on it). */
  schema?: string;
  /** fetch as a page on APP_ORIGIN would: the Origin header is set, as browsers do. */
  browserFetch: typeof fetch;
  /** A new simulated browser (its own IndexedDB), already initialised. */
  newDevice(): Promise<ServiceClient>;
  /** The OTP in the newest mail to `email`. */
  latestOtp(email: string): Promise<string>;
  /** Calls a browser endpoint directly (`headers`: more request headers, e.g. X-Forwarded-For). */
  post(
    path: string,
    body: unknown,
    origin?: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

/**
 * Environment that keeps the send challenge (otp/send-challenge.ts) out of the way: every test
 * user shares the one loopback address, so a suite's sign-ins pass its per-address threshold as
 * no real user's would. startTestService sets it unless a test's `env` says otherwise; the
 * challenge's own tests (test/otp/challenge-bypass.security.test.ts) set their thresholds.
 */
export const WITHOUT_SEND_CHALLENGE = {
  SERVICE_IDP_CHALLENGE_PER_IP: '100000/hour',
  SERVICE_IDP_CHALLENGE_PER_SUBNET: '100000/hour',
} as const;

export interface TestServiceOptions {
  testMode?: boolean;
  mailer?: Mailer;
  sms?: SmsTransport;
  /** Log lines (JSON) go here, at info level, when given. */
  logStream?: NodeJS.WritableStream;
  env?: Record<string, string>;
  now?: () => number;
  /** PostgreSQL runs only: connect through this URL (e.g. a proxy) instead of SERVICE_TEST_DATABASE_URL. */
  databaseUrl?: string;
  /** Shorter webhook poll interval, request timeout or lease. */
  webhookTimings?: ContextOptions['webhookTimings'];
  /** Resolves webhook receivers' names instead of the system resolver. */
  webhookResolve?: ContextOptions['webhookResolve'];
  clientMetadataTimeoutMs?: number;
  /** Reaches upstream identity providers (the presets' fixed hosts routed to local servers). */
  upstreamFetch?: ContextOptions['upstreamFetch'];
  /** Factors beside the registry's, as the composition takes them (test/support/fixture-factor.ts). */
  extraFactors?: ContextOptions['extraFactors'];
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-test-'));
  const config = loadConfig(
    { port: '0', data: dataDir, 'test-mode': options.testMode ?? false },
    { ...WITHOUT_SEND_CHALLENGE, ...options.env },
  );
  const database = await openTestDatabase(options.databaseUrl);
  const service = await startService(config, {
    db: database.db,
    ...(options.mailer ? { mailer: options.mailer } : {}),
    ...(options.sms ? { sms: options.sms } : {}),
    ...(options.logStream ? { logger: { level: 'info', stream: options.logStream } } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.webhookTimings ? { webhookTimings: options.webhookTimings } : {}),
    ...(options.webhookResolve ? { webhookResolve: options.webhookResolve } : {}),
    ...(options.clientMetadataTimeoutMs ? { clientMetadataTimeoutMs: options.clientMetadataTimeoutMs } : {}),
    ...(options.upstreamFetch ? { upstreamFetch: options.upstreamFetch } : {}),
    ...(options.extraFactors ? { extraFactors: options.extraFactors } : {}),
    generateSigningKey: testSigningKeys(),
    onContractViolation: (violation) => contractViolations.push(violation),
  }).catch(async (error: unknown) => {
    await database.db.destroy();
    await database.drop();
    throw error;
  });
  const keys = await service.ctx.clients.create({ name: 'Test App', origins: [APP_ORIGIN] });
  const browserFetch: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('origin', APP_ORIGIN);
    return fetch(input, { ...init, headers });
  };
  const post: TestService['post'] = async (path, body, origin = APP_ORIGIN, headers = {}) => {
    const response = await fetch(service.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'x-service-key': keys.publishableKey, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
  return {
    ...service,
    ...keys,
    tokenUrl: `${service.url}/oauth/token`,
    ...(database.schema ? { schema: database.schema } : {}),
    jwksUrl: `${service.url}/.well-known/jwks.json`,
    browserFetch,
    post,
    async newDevice() {
      const [{ ServiceClient }, { IDBFactory }] = await Promise.all([import('service-web'), import('fake-indexeddb')]);
      const device = new ServiceClient({ indexedDB: new IDBFactory(), fetch: browserFetch });
      const init = await device.init(keys.publishableKey, service.url);
      if (init.status !== 'INITIALIZED') throw new Error(`init failed: ${JSON.stringify(init)}`);
      return device;
    },
    async latestOtp(email) {
      const [mail] = await service.ctx.mailbox.list(1, email);
      const otp = mail?.text.match(/\b(\d{6})\b/)?.[1];
      if (!otp) throw new Error(`no OTP mail for ${email}`);
      return otp;
    },
    async close() {
      await service.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
      // Answers sent outside any test (a before or after hook) fail the suite here.
      const violations = takeContractViolations();
      if (violations) throw violations;
    },
  };
}

/** The PostgreSQL database the suite runs against (`npm run test:pg`), or undefined for SQLite. */
export const TEST_DATABASE_URL = process.env.SERVICE_TEST_DATABASE_URL || undefined;

/**
 * The options of a top-level describe whose tests run on SQLite whatever the suite (the CLI
 * on a data folder, or no database at all): `npm run test:pg` skips them, because
 * `npm test` runs the very same tests. Files that use startTestService or openTestDatabase run
 * on both databases and never take it.
 */
export const SQLITE_SUITE_ONLY = TEST_DATABASE_URL ? { skip: 'runs on SQLite whatever the database; npm test runs it' } : {};

/**
 * A fresh, empty database for one service: SQLite in memory, or a new PostgreSQL schema
 * (its own tables and kysely_migration, reached through search_path) dropped by `drop()`.
 */
export async function openTestDatabase(connectUrl = TEST_DATABASE_URL): Promise<{ db: Db; schema?: string; drop(): Promise<void> }> {
  if (!TEST_DATABASE_URL) return { db: openSqlite(':memory:'), drop: async () => {} };
  const schema = `t_${randomBytes(8).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  const db = openPostgres(
    { dataDir: '', databaseUrl: connectUrl, dbPoolSize: DB_POOL_SIZE, dbStatementTimeoutMs: DB_STATEMENT_TIMEOUT_MS },
    { searchPath: schema },
  );
  return { db, schema, drop: () => adminQuery(`drop schema if exists ${schema} cascade`) };
}

/**
 * A fresh database for the CLI (runCli, runBuiltCli): on PostgreSQL a new schema, reached through the
 * URL's `options` parameter as libpq does (`args` is `--database URL`), and `db`, a pool on it
 * for a service beside the CLI (startService's `db`); on SQLite nothing to pass, the data
 * folder's own file (a service started on the folder opens it too).
 */
export async function openCliDatabase(): Promise<{ args: string[]; db?: Db; drop(): Promise<void> }> {
  if (!TEST_DATABASE_URL) return { args: [], drop: async () => {} };
  const t = await openTestDatabase();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${t.schema}`);
  return {
    args: ['--database', url.toString()],
    db: t.db,
    drop: async () => {
      // A service given `db` closes it with itself: a second close is refused, and nothing is left to close.
      await t.db.destroy().catch(() => {});
      await t.drop();
    },
  };
}

/** Runs one statement on SERVICE_TEST_DATABASE_URL itself (outside any test schema). */
export async function adminQuery(text: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let counter = 0;
/** A fresh address per test, so per-recipient send throttles never couple tests. */
export function uniqueEmail(label = 'user'): string {
  counter += 1;
  return `${label}.${process.pid}.${counter}.${Date.now()}@example.com`;
}

/** A device whose key the test holds, to drive the wire protocol directly. */
export interface RawDevice {
  publicJwk: { kty: string; crv: string; x: string; y: string };
  privateKey: JoseKey;
  deviceId?: string;
}

export async function newRawDevice(): Promise<RawDevice> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const { kty, crv, x, y } = await exportJWK(publicKey);
  return { publicJwk: { kty: kty as string, crv: crv as string, x: x as string, y: y as string }, privateKey };
}

/** The device proof of packages/protocol device-proof.ts for a fresh challenge (`op` for a device operation). */
export async function deviceProof(service: TestService, device: RawDevice, email: string, op?: string): Promise<string> {
  const { challenge } = (await service.post('/v1/device-challenges', {})).body;
  return signDeviceProof(device, email, challenge, op);
}

/** The device proof for a challenge the caller fetched (the hosted page's calls fetch it as the page does). */
export function signDeviceProof(device: RawDevice, email: string, challenge: string, op?: string): Promise<string> {
  const payload = new TextEncoder().encode(JSON.stringify({ sub: email, nonce: challenge, iat: Math.floor(Date.now() / 1000), op }));
  return new CompactSign(payload)
    .setProtectedHeader({ alg: 'ES256', typ: 'device-proof+jwt', kid: device.deviceId as string, cv: 'v1' })
    .sign(device.privateKey);
}

/** authenticate with a remembered device's proof: the answer's body (SUCCESS, or OTP_NEEDED with deviceRefused). */
export async function loginWithDevice(service: TestService, device: RawDevice, email: string): Promise<any> {
  return (
    await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: await deviceProof(service, device, email) })
  ).body;
}

/** authenticate → email OTP (test mode) → verify: returns the device token of a verified registration. */
export async function verifiedRegistration(service: TestService, email: string, options: { rememberDevice?: boolean } = {}) {
  const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: options.rememberDevice ?? true });
  if (a.body?.status !== 'OTP_NEEDED' || !a.body.code) throw new Error(`authenticate: ${JSON.stringify(a.body)} (is test mode on?)`);
  const v = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
  if (v.status !== 200) throw new Error(`verify: ${JSON.stringify(v.body)}`);
  return a.body.deviceToken as string;
}

/**
 * A new user registers a remembered raw device and enrolls in `mfaMethod` (raw wire protocol,
 * test mode): the `/v1/devices` answer (SUCCESS for email, FINALIZE_REGISTRATION_NEEDED otherwise).
 */
export async function registerWithMfa(service: TestService, email: string, mfaMethod: 'email' | 'totp') {
  const device = await newRawDevice();
  const r = await service.post('/v1/devices', {
    userid: email,
    deviceToken: await verifiedRegistration(service, email),
    devicePublicKey: device.publicJwk,
    mfaMethod,
  });
  if (r.status !== 200) throw new Error(`register with ${mfaMethod}: ${JSON.stringify(r.body)}`);
  if (r.body.deviceId) device.deviceId = r.body.deviceId;
  return { device, body: r.body };
}

/** Exchanges a code at the token endpoint and returns the ID token's claims (unverified: the exchange tests verify). */
export async function claimsOf(service: TestService, code: string): Promise<Record<string, unknown>> {
  const response = await fetch(service.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: service.clientId, client_secret: service.secretKey }),
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`token: ${JSON.stringify(body)}`);
  return JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString());
}

/** Registers a remembered device whose key the test holds (raw wire protocol, test mode), as a browser with `userAgent`. */
export async function registerRawDevice(
  service: TestService,
  email: string,
  userAgent?: string,
): Promise<RawDevice & { deviceId: string }> {
  const device = await newRawDevice();
  const deviceToken = await verifiedRegistration(service, email);
  const response = await fetch(`${service.url}/v1/devices`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin: APP_ORIGIN,
      'x-service-key': service.publishableKey,
      ...(userAgent ? { 'user-agent': userAgent } : {}),
    },
    body: JSON.stringify({ userid: email, deviceToken, devicePublicKey: device.publicJwk }),
  });
  const body = await response.json();
  if (response.status !== 200 || typeof body.deviceId !== 'string') throw new Error(`register: ${JSON.stringify(body)}`);
  return { ...device, deviceId: body.deviceId, code: body.code };
}

export interface Received {
  to: string[];
  raw: string;
}

/** A local SMTP server (smtp-server) that keeps every message it receives. */
export async function startSmtp(): Promise<{ server: SMTPServer; port: number; inbox: Received[] }> {
  const { SMTPServer } = await import('smtp-server');
  const inbox: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        raw += chunk;
      });
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.server.address() as AddressInfo).port, inbox }));
  });
}

/** Delegation keys made by the service for `clientId`, and the SP's client built from them. */
export async function delegationFor(service: TestService, clientId: string) {
  const keys = await service.ctx.delegation.createKeys(clientId);
  const { ServiceDelegationClient } = await import('service-oauth-client');
  const client = ServiceDelegationClient.fromKeys({
    spSigningKey: keys.sp?.signingPrivatePem as string,
    spEncryptionKey: keys.sp?.encryptionPrivatePem as string,
    idpVerifyKey: keys.idp.verifyPublicPem,
    idpEncryptionKey: keys.idp.encryptionPublicPem,
    baseUrl: service.url,
    spId: clientId,
  });
  return { keys, client };
}

/**
 * A GET over node:http with the path sent as written and the body as bytes: fetch would
 * normalise dot segments, ask for gzip itself and decode what the service encoded.
 */
export function rawGet(base: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    request(base, { path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * A test-mode service's ID token for a new user of `client`, by the raw wire protocol from its
 * registered `origin` (test mode answers the email code itself) and the code's redemption: for
 * tests about keys and tokens, not about the sign-in.
 */
export async function testModeIdToken(
  url: string,
  client: { clientId: string; publishableKey: string; secretKey?: string },
  origin: string,
  email: string,
): Promise<string> {
  const headers = { 'content-type': 'application/json', origin, 'x-service-key': client.publishableKey };
  const post = async (path: string, body: unknown) =>
    (await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) })).json();
  const started = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
  await post('/v1/email-otp/verify', { userid: email, deviceToken: started.deviceToken, otp: started.code });
  const registered = await post('/v1/devices', { userid: email, deviceToken: started.deviceToken });
  const token = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: registered.code,
      client_id: client.clientId,
      client_secret: client.secretKey ?? '',
    }),
  });
  return ((await token.json()) as { id_token: string }).id_token;
}
