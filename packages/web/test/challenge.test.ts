import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { CHALLENGE_SOLUTION_HEADER, type SendChallenge } from 'service-protocol';
import { solveChallenge } from '../src/challenge.ts';
import { ServiceClient } from '../src/client.ts';
import { BASE_URL, CLIENT_ROUTE, fakeFetch } from './helpers.ts';

/**
 * A challenge as the service makes one (ALTCHA v2, SHA-256, deterministic): the key of `counter`
 * is SHA-256(salt ‖ nonce ‖ counter as 4 big-endian bytes), its first half the prefix to find.
 */
function challengeFor(counter: number): { challenge: SendChallenge; derivedKey: string } {
  const salt = randomBytes(16);
  const nonce = randomBytes(16);
  const counterBytes = Buffer.alloc(4);
  counterBytes.writeUInt32BE(counter);
  const derivedKey = createHash('sha256')
    .update(Buffer.concat([salt, nonce, counterBytes]))
    .digest('hex');
  const challenge: SendChallenge = {
    parameters: {
      algorithm: 'SHA-256',
      cost: 1,
      expiresAt: Math.floor(Date.now() / 1000) + 300,
      keyLength: 32,
      keyPrefix: derivedKey.slice(0, 32),
      nonce: nonce.toString('hex'),
      salt: salt.toString('hex'),
      data: { binding: 'b' },
    },
    signature: 'sig',
  };
  return { challenge, derivedKey };
}

const decode = (solution: string) => JSON.parse(Buffer.from(solution, 'base64url').toString('utf8'));

test('solveChallenge finds the counter the challenge was made from, and returns it with the challenge unchanged', async () => {
  const { challenge, derivedKey } = challengeFor(1234);
  const solution = await solveChallenge(challenge);
  assert.ok(solution);
  assert.deepEqual(decode(solution), { challenge, solution: { counter: 1234, derivedKey } });
});

test('solveChallenge resolves undefined for a malformed challenge, never throws', async () => {
  const { challenge } = challengeFor(1);
  assert.equal(await solveChallenge({ ...challenge, parameters: { ...challenge.parameters, salt: 'xyz' } }), undefined);
  assert.equal(await solveChallenge({ ...challenge, parameters: { ...challenge.parameters, algorithm: 'SHA-1' as 'SHA-256' } }), undefined);
  assert.equal(await solveChallenge(null as unknown as SendChallenge), undefined);
});

test('CHALLENGE_REQUIRED carries the challenge; the retry sends its solution in the header, and the code is sent', async () => {
  const { challenge } = challengeFor(3);
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': (call) =>
      call.headers[CHALLENGE_SOLUTION_HEADER]
        ? { status: 200, body: { status: 'OTP_NEEDED', message: 'Code sent', deviceToken: 'dt_1234567890' } }
        : { status: 428, body: { code: 'ERR_CHALLENGE_REQUIRED', message: 'Solve the challenge', challenge } },
  });
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  const first = await client.authenticate('ann@example.com');
  assert.equal(first.status, 'CHALLENGE_REQUIRED');
  assert.ok('challenge' in first && first.challenge);
  assert.deepEqual(first.challenge, challenge);
  assert.equal(service.calls.at(-1)?.headers[CHALLENGE_SOLUTION_HEADER], undefined, 'no solution sent unasked');

  const challengeSolution = await solveChallenge(first.challenge);
  assert.ok(challengeSolution);
  const retried = await client.authenticate('ann@example.com', { challengeSolution });
  assert.equal(retried.status, 'OTP_NEEDED');
  assert.equal(service.calls.at(-1)?.headers[CHALLENGE_SOLUTION_HEADER], challengeSolution);
});

test('initiateMfa and verifyDevice send a solution the same way; a solution that is not a string is refused before any request', async () => {
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': () => ({ status: 200, body: { status: 'OTP_NEEDED', message: 'Code sent', deviceToken: 'dt_1234567890' } }),
    'POST /v1/mfa/initiate': () => ({ status: 200, body: { status: 'MFA_INITIATED', message: 'Sent', method: 'sms' } }),
    'POST /v1/devices': () => ({ status: 200, body: { status: 'MFA_ENROLLMENT_NEEDED', message: 'Pick', methods: ['sms'] } }),
  });
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  assert.equal(
    (await client.initiateMfa({ userid: 'ann@example.com', sessionId: 's1', challengeSolution: 'sol-1' })).status,
    'MFA_INITIATED',
  );
  assert.equal(service.calls.at(-1)?.headers[CHALLENGE_SOLUTION_HEADER], 'sol-1');
  await client.authenticate('ann@example.com');
  const enrolled = await client.verifyDevice({ userid: 'ann@example.com', challengeSolution: 'sol-2' });
  assert.equal(enrolled.status, 'MFA_ENROLLMENT_NEEDED');
  assert.equal(service.calls.at(-1)?.headers[CHALLENGE_SOLUTION_HEADER], 'sol-2');
  const calls = service.calls.length;
  const refused = await client.authenticate('ann@example.com', { challengeSolution: 42 as unknown as string });
  assert.equal(refused.status, 'INVALID_REQUEST');
  assert.equal(service.calls.length, calls);
});

test("CHALLENGE_REQUIRED with the operator's CAPTCHA: the kind, site key and action reach the caller; the widget's token is the solution", async () => {
  const captcha = { kind: 'turnstile', siteKey: '0x4AAAAAAAsitekey', action: 'authenticate' } as const;
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': (call) =>
      call.headers[CHALLENGE_SOLUTION_HEADER] === 'widget-token'
        ? { status: 200, body: { status: 'OTP_NEEDED', message: 'Code sent', deviceToken: 'dt_1234567890' } }
        : { status: 428, body: { code: 'ERR_CHALLENGE_REQUIRED', message: 'Solve the challenge', challenge: captcha } },
  });
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  const first = await client.authenticate('ann@example.com');
  assert.equal(first.status, 'CHALLENGE_REQUIRED');
  assert.ok('challenge' in first);
  assert.deepEqual(first.challenge, captcha);
  assert.equal(await solveChallenge(captcha), undefined, 'no proof of work to solve: the widget solves it');
  const retried = await client.authenticate('ann@example.com', { challengeSolution: 'widget-token' });
  assert.equal(retried.status, 'OTP_NEEDED');
  assert.equal(service.calls.at(-1)?.headers[CHALLENGE_SOLUTION_HEADER], 'widget-token');
});
