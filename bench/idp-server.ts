/**
 * The service under test, from its built package (packages/idp/dist via the workspace link),
 * with file-backed SQLite in a temporary data folder (or PostgreSQL when a database URL is
 * given, bench/postgres.ts) and the HTTP logger off. Besides serving
 * HTTP it answers set-up requests from the benchmark over IPC, so fixtures never have to go
 * through the rate-limited public flows and never cost time inside a measured run.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadConfig, startService } from 'service-idp';
import { serveRequests } from './child.js';
import { BENCH_API, BENCH_ORIGIN, type BenchMachine } from './flows.js';
import { deviceProof, newDeviceKey } from './proof.js';

// bench/postgres.ts passes a database, and a fixed port and issuer shared with a second node.
const [dataDir, database, port = '0', issuer] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: idp-server.ts DATA_DIR [DATABASE_URL PORT ISSUER]');
// Test mode only makes registration return the OTP; the trusted-device and token paths do not look at it.
// The fixtures' registrations send a code each, faster than any person: the send budgets (a
// defence against floods, measured by its own tests) are lifted so set-up never meets them.
const unbounded = '999999999/minute';
const config = loadConfig(
  { port, host: '127.0.0.1', data: dataDir, database, issuer, 'test-mode': true },
  {
    SERVICE_IDP_MAIL_BUDGET: unbounded,
    SERVICE_IDP_APP_MAIL_BUDGET: unbounded,
    SERVICE_IDP_SMS_BUDGET: unbounded,
    SERVICE_IDP_APP_SMS_BUDGET: unbounded,
  },
);
const service = await startService(config, { logger: false });
const { ctx } = service;
const keys = await ctx.clients.create({ name: 'Bench', origins: [BENCH_ORIGIN] });
const client = await ctx.clients.authenticateBrowser(keys.publishableKey, BENCH_ORIGIN);
// Clients whose ID tokens are signed with ES256 and EdDSA, for the token endpoint's other algorithms.
const otherAlgs = Object.fromEntries(
  await Promise.all(
    (['ES256', 'EdDSA'] as const).map(async (alg) => {
      const other = await ctx.clients.create({ name: `Bench ${alg}`, origins: [BENCH_ORIGIN], idTokenSignedResponseAlg: alg });
      return [alg, { keys: other, client: await ctx.clients.authenticateBrowser(other.publishableKey, BENCH_ORIGIN) }] as const;
    }),
  ),
);

// A machine client granted read:notes on an API, for the client_credentials grant (docs/authorization.md).
// (Once per database: bench/postgres.ts may start this child again on the same one.)
if (!(await ctx.apiAuthorization.findApi(BENCH_API)))
  await ctx.apis.createApi({ identifier: BENCH_API, name: 'Bench API', permissions: ['read:notes'] }, 'bench');
const machineKeys = await ctx.clients.create({ name: 'Bench machine', origins: [], machine: true });
await ctx.apis.grantClient(machineKeys.clientId, [{ api: BENCH_API, permission: 'read:notes' }], 'bench');
const machine: BenchMachine = {
  clientId: machineKeys.clientId,
  secretKey: machineKeys.secretKey ?? '',
  resource: BENCH_API,
  scope: 'read:notes',
};

let registered = 0;
/**
 * The registration flow the HTTP routes run (start → verifyOtp → finish), called
 * in-process. Over HTTP every registration from 127.0.0.1 would count against the per-IP OTP
 * send limit (SEND_PER_IP: 30 an hour) and its network's (SEND_PER_SUBNET), so each one here
 * names its own address in 198.18.0.0/15 (benchmarking's range), each in a /24 of its own until
 * the 512th, then the next address of each.
 */
async function register(
  email: string,
  publicJwk: Parameters<typeof ctx.newDeviceSignIn.finish>[2]['devicePublicKey'],
  forClient: typeof client = client,
) {
  registered += 1;
  const ip = `198.${18 + ((registered >> 8) & 1)}.${registered & 255}.${1 + (registered >> 9)}`;
  const { deviceToken, otp } = await ctx.newDeviceSignIn.start(forClient, email, {
    rememberDevice: true,
    cryptoVersion: 'v1',
    codeChallenge: null,
    ip,
  });
  await ctx.newDeviceSignIn.verifyOtp(forClient, email, deviceToken, otp);
  const outcome = await ctx.newDeviceSignIn.finish(forClient, email, { deviceToken, devicePublicKey: publicJwk, ip });
  if (outcome.kind !== 'done' || !outcome.deviceId) throw new Error(`device not remembered (${outcome.kind})`);
  return outcome.deviceId;
}

// One device of the service's own per client (devices belong to a client) to mint authorization codes.
// (One address per client: the OTP send limit per recipient would refuse a second registration.)
const minterKey = newDeviceKey();
const minters = new Map<string, { email: string; deviceId: string }>();
for (const [i, forClient] of [client, ...Object.values(otherAlgs).map((o) => o.client)].entries()) {
  const email = `bench-minter-${i}@example.com`;
  minters.set(forClient.id, { email, deviceId: await register(email, minterKey.publicJwk, forClient) });
}

/** One code exactly as a trusted-device login issues it: challenge, signed proof, authenticate. */
async function mintOne(forClient: typeof client): Promise<string> {
  const { email: minterEmail, deviceId: minterId } = minters.get(forClient.id) as { email: string; deviceId: string };
  const { challenge } = ctx.prover.issueChallenge(forClient);
  const outcome = await ctx.signInStart.authenticate(forClient, {
    email: minterEmail,
    cryptoVersion: 'v1',
    rememberDevice: false,
    codeChallenge: null,
    deviceProof: deviceProof(minterKey.privateKey, minterId, minterEmail, challenge),
    ip: '127.0.0.1',
  });
  if (outcome.kind !== 'trusted') throw new Error('minting a code fell back to OTP');
  return outcome.code;
}

// CPU profiles of the measured runs only (BENCH_CPU_PROF=1), through the inspector rather than
// --cpu-prof, so set-up, minting and warm-ups stay out of them.
const inspector = new Session();
inspector.connect();

serveRequests(
  {
    async profileStart() {
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.start');
    },
    async profileStop(message: { file: string }) {
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(message.file, JSON.stringify(profile));
    },
    async register(message: { devices: { email: string; publicJwk: Parameters<typeof register>[1] }[] }) {
      const ids: string[] = [];
      for (const device of message.devices) ids.push(await register(device.email, device.publicJwk));
      return ids;
    },
    async mint(message: { count: number; alg?: 'ES256' | 'EdDSA' }) {
      const forClient = message.alg ? (otherAlgs[message.alg]?.client ?? client) : client;
      const codes: string[] = [];
      // A few in flight so the async proof verification overlaps the SQLite work.
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (codes.length < message.count) codes.push(await mintOne(forClient));
        }),
      );
      return codes.slice(0, message.count);
    },
  },
  () => service.close(),
);
process.send?.({
  type: 'ready',
  result: {
    url: port === '0' ? service.url : `http://127.0.0.1:${port}`,
    ...keys,
    es256: JSON.stringify(otherAlgs.ES256?.keys),
    eddsa: JSON.stringify(otherAlgs.EdDSA?.keys),
    machine: JSON.stringify(machine),
  },
});
