/**
 * Attack: a bot asks for codes past the send challenge's thresholds (issue 41) and tries not to
 * pay the proof of work: by skipping it, replaying one solution, forging or precomputing one,
 * moving one to another address or endpoint, using an expired one, or forging its client IP.
 * Past the thresholds every code-sending request needs an unspent solution bound to its
 * address and endpoint; it is refused before anything is sent or counted as sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createChallenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { CHALLENGE_SOLUTION_HEADER, type SendChallenge } from 'service-protocol';
import { loadConfig } from '../../src/config.js';
import { createSecretHasher } from '../../src/crypto/secrets.js';
import { SEND_CHALLENGE_AFTER_PER_IP, SEND_CHALLENGE_TTL_SECONDS, SEND_SPACING_PER_PURPOSE } from '../../src/defaults.js';
import { createSendChallenges } from '../../src/otp/send-challenge.js';
import { createSpentTokenStore } from '../../src/spent-tokens/store.js';
import { migrate } from '../../src/storage/migrations.js';
import {
  APP_ORIGIN,
  loginWithDevice,
  newRawDevice,
  openTestDatabase,
  registerWithMfa,
  startTestService,
  type TestService,
  uniqueEmail,
  verifiedRegistration,
} from '../support/helpers.js';

/** Asks for a sign-in code for `email` from `ip` (through the trusted proxy), with a solution when given. */
async function ask(service: TestService, email: string, ip: string, solution?: string) {
  return service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, APP_ORIGIN, {
    'x-forwarded-for': ip,
    ...(solution ? { [CHALLENGE_SOLUTION_HEADER]: solution } : {}),
  });
}

/** What a client sends back: the challenge unchanged and its solution, as service-web's solveChallenge encodes them. */
const encode = (challenge: SendChallenge, solution: { counter: number; derivedKey: string }) =>
  Buffer.from(JSON.stringify({ challenge, solution })).toString('base64url');

/** Solves a challenge with altcha-lib's own solver (node:crypto: fast, unlike crypto.subtle one digest at a time). */
async function solve(challenge: SendChallenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  assert.ok(solution, 'the challenge has a solution');
  return encode(challenge, { counter: solution.counter, derivedKey: solution.derivedKey });
}

/** The challenge of a 428 answer, after checking the answer is one. */
function challengeOf(answer: { status: number; body: { code?: string; challenge?: SendChallenge } }): SendChallenge {
  assert.equal(answer.status, 428, JSON.stringify(answer.body));
  assert.equal(answer.body.code, 'ERR_CHALLENGE_REQUIRED');
  assert.ok(answer.body.challenge, 'a fresh challenge in the body');
  return answer.body.challenge;
}

const mails = async (service: TestService, email: string) => (await service.ctx.mailbox.list(10, email)).length;

/** Each test its own address, so thresholds counted per address do not leak between tests: 10.9.<n>.1. */
let next = 0;
const freshIp = () => `10.9.${++next}.1`;

describe('the send challenge', () => {
  const clock = { offset: 0, now: () => Date.now() + clock.offset };
  let service: TestService;
  before(async () => {
    service = await startTestService({
      // Two codes an hour per address without work; the network and service thresholds out of the way.
      env: {
        SERVICE_IDP_TRUST_PROXY: '127.0.0.1',
        SERVICE_IDP_CHALLENGE_PER_IP: '2/hour',
        SERVICE_IDP_CHALLENGE_PER_SUBNET: '1000/hour',
        SERVICE_IDP_CHALLENGE_MAIL: '1000/hour',
      },
      now: clock.now,
    });
  });
  after(() => service.close());

  /** An address already past its threshold, and the challenge its next request got. */
  async function pastThreshold(email = uniqueEmail('bot')) {
    const ip = freshIp();
    for (let n = 0; n < 2; n++) assert.equal((await ask(service, uniqueEmail('warm'), ip)).status, 200);
    return { ip, email, challenge: challengeOf(await ask(service, email, ip)) };
  }

  it('below the thresholds no challenge is asked', async () => {
    const ip = freshIp();
    for (let n = 0; n < 2; n++) {
      const answer = await ask(service, uniqueEmail('user'), ip);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.status, 'OTP_NEEDED');
    }
  });

  it('the challenge skipped by calling the API directly: refused with a fresh challenge, nothing sent or counted as sent', async () => {
    const { ip, email, challenge } = await pastThreshold();
    assert.equal(challenge.parameters.algorithm, 'SHA-256');
    assert.ok(challenge.parameters.expiresAt * 1000 > clock.now());
    assert.equal(await mails(service, email), 0, 'no code mailed');
    // The hard per-address limit (SEND_PER_IP) was not spent by the refusal: two sends, not three.
    const counter = await service.ctx.db
      .selectFrom('rate_counters')
      .select('count')
      .where('key', '=', `send:ip:${ip}:3600`)
      .executeTakeFirstOrThrow();
    assert.equal(Number(counter.count), 2);
    const solved = await ask(service, email, ip, await solve(challenge));
    assert.equal(solved.status, 200, JSON.stringify(solved.body));
    assert.equal(await mails(service, email), 1, 'the retried request sent the code');
  });

  it('a replayed solution is refused: each solution sends one code', async () => {
    const { ip, email, challenge } = await pastThreshold();
    const solution = await solve(challenge);
    assert.equal((await ask(service, email, ip, solution)).status, 200);
    challengeOf(await ask(service, email, ip, solution));
    assert.equal(await mails(service, email), 1);
  });

  it('a precomputed or forged solution is refused: another key, a tampered challenge, a key found without the work', async () => {
    const { ip, email, challenge } = await pastThreshold();
    // A challenge of the attacker's own making, signed with its own key and solved ahead of time.
    const forged = (await createChallenge({
      algorithm: 'SHA-256',
      cost: 1,
      counter: 1,
      deriveKey,
      expiresAt: Math.floor(clock.now() / 1000) + 60,
      data: challenge.parameters.data,
      hmacSignatureSecret: 'attacker',
    })) as SendChallenge;
    challengeOf(await ask(service, email, ip, await solve(forged)));
    // The service's challenge made easier (a one-byte prefix): its signature no longer holds.
    const easier = { ...challenge, parameters: { ...challenge.parameters, keyPrefix: '00' } };
    challengeOf(await ask(service, email, ip, await solve(easier)));
    // The service's challenge with a guessed key: no work, no code.
    challengeOf(await ask(service, email, ip, encode(challenge, { counter: 7, derivedKey: '00'.repeat(32) })));
    challengeOf(await ask(service, email, ip, 'not-a-solution'));
    assert.equal(await mails(service, email), 0);
  });

  it('a solution for another address is refused', async () => {
    const { ip, email, challenge } = await pastThreshold();
    const victim = uniqueEmail('victim');
    challengeOf(await ask(service, victim, ip, await solve(challenge)));
    assert.equal(await mails(service, victim), 0);
    assert.equal(await mails(service, email), 0);
  });

  it('an expired solution is refused', async () => {
    const { ip, email, challenge } = await pastThreshold();
    const solution = await solve(challenge);
    clock.offset += (SEND_CHALLENGE_TTL_SECONDS + 1) * 1000;
    try {
      challengeOf(await ask(service, email, ip, solution));
    } finally {
      clock.offset -= (SEND_CHALLENGE_TTL_SECONDS + 1) * 1000;
    }
    assert.equal(await mails(service, email), 0);
  });

  it('a faked client IP header without a trusted proxy does not escape the per-IP count', async () => {
    const direct = await startTestService({ env: { SERVICE_IDP_CHALLENGE_PER_IP: '2/hour' } });
    try {
      for (let n = 0; n < 2; n++) assert.equal((await ask(direct, uniqueEmail('bot'), `192.0.2.${n + 1}`)).status, 200);
      // Counted under the socket's address, whatever the header says.
      challengeOf(await ask(direct, uniqueEmail('bot'), '192.0.2.99'));
    } finally {
      await direct.close();
    }
  });
});

describe('raised risk on a network, or on the whole service', () => {
  it("a bot spread over one network's addresses is asked once the network passes its threshold; another network is not", async () => {
    const service = await startTestService({
      env: { SERVICE_IDP_TRUST_PROXY: '127.0.0.1', SERVICE_IDP_CHALLENGE_PER_IP: '1000/hour', SERVICE_IDP_CHALLENGE_PER_SUBNET: '2/hour' },
    });
    try {
      for (let n = 1; n <= 2; n++) assert.equal((await ask(service, uniqueEmail('bot'), `198.51.100.${n}`)).status, 200);
      challengeOf(await ask(service, uniqueEmail('bot'), '198.51.100.3'));
      assert.equal((await ask(service, uniqueEmail('user'), '198.51.101.1')).status, 200, 'the next /24 is another network');
    } finally {
      await service.close();
    }
  });

  it('a flood from many networks: past the service-wide threshold every browser is asked, a first-time address too', async () => {
    const service = await startTestService({ env: { SERVICE_IDP_TRUST_PROXY: '127.0.0.1', SERVICE_IDP_CHALLENGE_MAIL: '2/minute' } });
    try {
      for (let n = 1; n <= 2; n++) assert.equal((await ask(service, uniqueEmail('bot'), `10.${n}.0.1`)).status, 200);
      const email = uniqueEmail('user');
      const { challenge } = (await ask(service, email, '10.77.0.1')).body;
      assert.ok(challenge, 'a fresh network is asked as well');
      const solved = await ask(service, email, '10.77.0.1', await solve(challenge));
      assert.equal(solved.status, 200, 'and gets its code once it solves it');
      assert.equal(await mails(service, email), 1);
    } finally {
      await service.close();
    }
  });
});

describe('SMS at the MFA step', () => {
  let service: TestService;
  before(async () => {
    // One SMS an hour for the whole service before every browser is asked: the enrollment's is the one.
    service = await startTestService({ testMode: true, env: { SERVICE_IDP_CHALLENGE_SMS: '1/hour' } });
  });
  after(() => service.close());

  it('a texted MFA code past the SMS threshold needs a solution bound to the phone and the MFA endpoint; nothing is texted before', async () => {
    const email = uniqueEmail('sms');
    const phone = '+14155550188';
    const device = await newRawDevice();
    const enrolled = await service.post('/v1/devices', {
      userid: email,
      deviceToken: await verifiedRegistration(service, email),
      devicePublicKey: device.publicJwk,
      mfaMethod: 'sms',
      phoneNumber: phone,
    });
    assert.equal(enrolled.body.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(enrolled.body));
    const [enrollmentSms] = await service.ctx.smsOutbox.list(1, phone);
    const otp = enrollmentSms?.body.match(/\b(\d{6})\b/)?.[1];
    const confirmed = await service.post('/v1/mfa/verify', { userid: email, sessionId: enrolled.body.sessionId, otp });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    device.deviceId = confirmed.body.deviceId;

    const login = await loginWithDevice(service, device, email);
    assert.equal(login.status, 'MFA_REQUIRED');
    const initiate = (solution?: string) =>
      service.post('/v1/mfa/initiate', { userid: email, sessionId: login.sessionId }, APP_ORIGIN, {
        ...(solution ? { [CHALLENGE_SOLUTION_HEADER]: solution } : {}),
      });
    const texted = async () => (await service.ctx.smsOutbox.list(10, phone)).length;
    const challenge = challengeOf(await initiate());
    assert.equal(await texted(), 1, 'only the enrollment code');
    assert.equal((await initiate(await solve(challenge))).status, 200);
    assert.equal(await texted(), 2, 'the MFA code is texted once solved');
  });
});

describe('a send challenge is bound to its endpoint', () => {
  it('a solution of the sign-in endpoint is refused at the MFA endpoint, for the same address, and still works where it was issued', async () => {
    // One code request per address without work: the registration's is the one.
    let offset = 0;
    const service = await startTestService({
      testMode: true,
      env: { SERVICE_IDP_CHALLENGE_PER_IP: '1/hour' },
      now: () => Date.now() + offset,
    });
    try {
      const email = uniqueEmail('mfa');
      const { device } = await registerWithMfa(service, email, 'email');
      const login = await loginWithDevice(service, device, email);
      assert.equal(login.status, 'MFA_REQUIRED');
      const solution = await solve(challengeOf(await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' })));
      const withSolution = { [CHALLENGE_SOLUTION_HEADER]: solution };
      const mfa = await service.post('/v1/mfa/initiate', { userid: email, sessionId: login.sessionId }, APP_ORIGIN, withSolution);
      challengeOf(mfa);
      // Past the resend spacing of the registration's code to this address.
      offset += (SEND_SPACING_PER_PURPOSE[0].windowSeconds + 1) * 1000;
      const signIn = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, APP_ORIGIN, withSolution);
      assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
    } finally {
      await service.close();
    }
  });

  it('a solution issued at one endpoint is refused at another, for the same address', async () => {
    const database = await openTestDatabase();
    try {
      await migrate(database.db);
      const challenges = createSendChallenges({
        hmacKey: 'k'.repeat(64),
        hash: createSecretHasher(Buffer.alloc(32, 7)),
        spent: createSpentTokenStore(database.db),
        now: Date.now,
      });
      const address = 'ann@example.com';
      const challenge = await challenges.issue({ address, endpoint: '/v1/authenticate' });
      const solution = await solve(challenge);
      assert.equal(await challenges.redeem(solution, { address, endpoint: '/v1/mfa/initiate' }), false);
      assert.equal(
        await challenges.redeem(solution, { address, endpoint: '/v1/authenticate' }),
        true,
        'the same solution where it was issued',
      );
    } finally {
      await database.db.destroy();
      await database.drop();
    }
  });
});

describe("the thresholds are the operator's", () => {
  it("defaults to defaults.ts, takes the budgets' form, and refuses anything else naming the setting", () => {
    assert.deepEqual(loadConfig({}, {}).sendChallengeThresholds.ip, SEND_CHALLENGE_AFTER_PER_IP);
    const set = loadConfig({}, { SERVICE_IDP_CHALLENGE_SMS: '3/minute,20/day' }).sendChallengeThresholds.service.sms;
    assert.deepEqual(set, [
      { max: 3, windowSeconds: 60 },
      { max: 20, windowSeconds: 86400 },
    ]);
    assert.throws(() => loadConfig({}, { SERVICE_IDP_CHALLENGE_PER_IP: 'ten' }), /invalid SERVICE_IDP_CHALLENGE_PER_IP/);
  });
});
