/**
 * Verified domains under attack (docs/security.md): a domain's verification spoofed (the record
 * elsewhere, another claim's token, a value that only contains the token, a failing resolver);
 * two organizations verifying one domain at once; one organization's id reaching another's
 * claim (IDOR); the email-first routing bypassed with a mailed code or a remembered device; and
 * an organization's own provider speaking for addresses outside its domains. Runs on SQLite and,
 * with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { claimsFor, connect, signInWith } from '../factors/upstream/upstream-helpers.js';
import { loginWithDevice, registerRawDevice, uniqueEmail } from '../support/helpers.js';
import { startUpstream, type TestUpstream } from '../support/upstream.js';
import { type DomainStack, newOrganization, startDomainStack, uniqueDomain, verifiedDomain } from './domain-helpers.js';

describe('organization domains: spoofing, IDOR and routing bypass', () => {
  let stack: DomainStack;
  let upstream: TestUpstream;
  before(async () => {
    stack = await startDomainStack();
    upstream = await startUpstream(`${stack.service.url}${UpstreamPaths.callback}`);
  });
  after(async () => {
    await upstream.close();
    await stack.service.close();
    await stack.dns.close();
  });

  const claim = async (org: string, domain: string) => {
    const answer = await stack.api('POST', `/organizations/${org}/domains`, { domain });
    assert.equal(answer.status, 201);
    return answer.body as { record: { name: string; value: string } };
  };
  const isVerified = async (org: string, domain: string) =>
    (await stack.api('GET', `/organizations/${org}/domains/${domain}`)).body.verified;

  it('domain verification spoofed: a record at the apex, another claim’s token, or a value that only contains the token proves nothing', async () => {
    const { api, dns, service } = stack;
    const victim = await newOrganization(service, 'Victim');
    const attacker = await newOrganization(service, 'Attacker');
    const domain = uniqueDomain('victim');
    const victimClaim = await claim(victim, domain);
    const attackerClaim = await claim(attacker, domain);
    assert.notEqual(attackerClaim.record.value, victimClaim.record.value, 'each claim has its own token');

    // The attacker's value at the apex (say, through a form that writes TXT records there): not the verification name.
    dns.publish(domain, [[attackerClaim.record.value]]);
    // The victim's own record, published by the victim: proves the victim's claim, not the attacker's.
    dns.publish(victimClaim.record.name, [
      [victimClaim.record.value],
      [`x${attackerClaim.record.value}x`],
      [`${attackerClaim.record.value} extra`],
    ]);
    const spoofed = await api('POST', `/organizations/${attacker}/domains/${domain}/verify`);
    assert.equal(spoofed.status, 400);
    assert.equal(await isVerified(attacker, domain), false);

    assert.equal((await api('POST', `/organizations/${victim}/domains/${domain}/verify`)).status, 200);
    assert.equal(await isVerified(victim, domain), true);
  });

  it('domain verification spoofed: a resolver that fails (SERVFAIL, no answer) verifies nothing', async () => {
    const { api, dns, service } = stack;
    const org = await newOrganization(service);
    const domain = uniqueDomain();
    const made = await claim(org, domain);
    dns.publish(made.record.name, []);
    assert.equal((await api('POST', `/organizations/${org}/domains/${domain}/verify`)).status, 400);
    assert.equal(await isVerified(org, domain), false);
  });

  it('a domain held verified by one organization is refused to another, also when both verify at once', async () => {
    const { api, dns, service } = stack;
    const domain = uniqueDomain('contested');
    const first = await newOrganization(service, 'First');
    const second = await newOrganization(service, 'Second');
    const firstClaim = await claim(first, domain);
    const secondClaim = await claim(second, domain);
    // Both records published (a domain changing hands mid-way): both verify at the same moment.
    dns.publish(firstClaim.record.name, [[firstClaim.record.value], [secondClaim.record.value]]);
    const answers = await Promise.all([
      api('POST', `/organizations/${first}/domains/${domain}/verify`),
      api('POST', `/organizations/${second}/domains/${domain}/verify`),
    ]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400]);
    const holders = [await isVerified(first, domain), await isVerified(second, domain)].filter(Boolean);
    assert.equal(holders.length, 1, 'exactly one organization holds it');
    // Nor by the operator's word: vouching for the loser is refused too.
    const loser = answers[0].status === 200 ? second : first;
    assert.equal((await api('POST', `/organizations/${loser}/domains/${domain}/vouch`)).status, 400);
  });

  it('IDOR: another organization’s id with this organization’s domain reaches nothing and changes nothing', async () => {
    const { api, service } = stack;
    const owner = await newOrganization(service, 'Owner');
    const intruder = await newOrganization(service, 'Intruder');
    const domain = await verifiedDomain(stack, owner);
    const connection = await service.ctx.connections.create(
      { preset: 'oidc', issuer: upstream.issuer, clientId: 'x', clientSecret: 's', clients: [] },
      'test',
    );
    for (const [method, path, body] of [
      ['GET', `/organizations/${intruder}/domains/${domain}`, undefined],
      ['POST', `/organizations/${intruder}/domains/${domain}/verify`, undefined],
      ['POST', `/organizations/${intruder}/domains/${domain}/vouch`, undefined],
      ['PATCH', `/organizations/${intruder}/domains/${domain}`, { connectionId: connection.id }],
      ['DELETE', `/organizations/${intruder}/domains/${domain}`, undefined],
    ] as const) {
      assert.equal((await api(method, path, body)).status, 404, `${method} ${path}`);
    }
    const kept = (await api('GET', `/organizations/${owner}/domains/${domain}`)).body;
    assert.deepEqual([kept.verified, kept.connectionId], [true, null]);
    assert.deepEqual((await api('GET', `/organizations/${intruder}/domains`)).body.domains, []);
  });

  it('automatic joining by a domain claimed but not verified: a newcomer at it joins no organization', async () => {
    const { api, service } = stack;
    const holder = await newOrganization(service, 'Holder');
    const squatter = await newOrganization(service, 'Squatter');
    const domain = uniqueDomain();
    // The squatter claims the domain and chooses a join role; it never proves the domain.
    await claim(squatter, domain);
    await service.ctx.organizations.createRole({ name: 'squat-role' }, 'test');
    assert.equal((await api('PATCH', `/organizations/${squatter}/domains/${domain}`, { joinRole: 'squat-role' })).status, 200);
    await registerRawDevice(service, `first@${domain}`);
    assert.deepEqual((await api('GET', `/organizations/${squatter}/members`)).body.members, []);
    // Once the real owner holds it verified without a join role, still nobody joins either.
    await verifiedDomain(stack, holder, domain);
    await registerRawDevice(service, `second@${domain}`);
    assert.deepEqual((await api('GET', `/organizations/${squatter}/members`)).body.members, []);
    assert.deepEqual((await api('GET', `/organizations/${holder}/members`)).body.members, []);
  });

  it('escalation through automatic joining: a join role that manages the organization is refused, so nobody joins as its admin', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service, 'Joiners');
    const domain = await verifiedDomain(stack, org);
    await service.ctx.organizations.createRole({ name: 'join-admin', managesOrganization: true }, 'test');
    const answer = await api('PATCH', `/organizations/${org}/domains/${domain}`, { joinRole: 'join-admin' });
    assert.equal(answer.status, 400);
    assert.match(answer.body.message, /may not manage/);
    assert.equal((await api('GET', `/organizations/${org}/domains/${domain}`)).body.joinRole, null);
    await registerRawDevice(service, `newcomer@${domain}`);
    assert.deepEqual((await api('GET', `/organizations/${org}/members`)).body.members, []);
  });

  it('the email-first routing bypassed with a mailed code or a remembered device: neither signs a routed address in', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = uniqueDomain('routed');
    const email = `alice@${domain}`;
    // Alice registered a browser by mailed code before her company routed its domain.
    const device = await registerRawDevice(service, email);
    assert.equal((await loginWithDevice(service, device, email)).status, 'SUCCESS');
    await verifiedDomain(stack, org, domain);
    const connection = (await connect(service, upstream, [])).id;
    await api('PATCH', `/organizations/${org}/domains/${domain}`, { connectionId: connection });
    const mailsBefore = (await service.ctx.mailbox.list(100, email)).length;

    for (const userid of [email, `ALICE@${domain.toUpperCase()}`, `bob@${domain}`]) {
      const answer = await service.post('/v1/authenticate', { userid, cryptoVersion: 'v1', rememberDevice: true });
      assert.equal(answer.status, 200);
      assert.deepEqual([answer.body.status, answer.body.connection, answer.body.deviceToken], ['UPSTREAM_REQUIRED', connection, undefined]);
    }
    const withDevice = await loginWithDevice(service, device, email);
    assert.deepEqual([withDevice.status, withDevice.code], ['UPSTREAM_REQUIRED', undefined]);
    // No code went out, and the email-OTP step has nothing to verify.
    assert.equal((await service.ctx.mailbox.list(100, email)).length, mailsBefore);
    const guess = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: 'dt_forged', otp: '123456' });
    assert.notEqual(guess.status, 200);

    // Look-alikes are other domains: a subdomain, a suffix, a homograph in another script.
    for (const other of [`a@eu.${domain}`, `a@${domain}.evil.example`, `a@${domain.replace('routed', 'rоuted')}`]) {
      assert.equal((await service.post('/v1/authenticate', { userid: other, cryptoVersion: 'v1' })).body.status, 'OTP_NEEDED', other);
    }
    // Allowed by the organization: the mailed code works again.
    await api('PATCH', `/organizations/${org}/domains/${domain}`, { allowEmailCode: true });
    assert.equal((await service.post('/v1/authenticate', { userid: `dave@${domain}`, cryptoVersion: 'v1' })).body.status, 'OTP_NEEDED');
  });

  it('an organization’s provider speaking for an address outside its verified domains is refused; inside them it links with no mailed code', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = await verifiedDomain(stack, org);
    const connection = (await connect(service, upstream, [])).id;
    await api('PATCH', `/organizations/${org}/domains/${domain}`, { connectionId: connection });

    // A victim outside the organization: its provider claims the address, verified or not.
    const victim = uniqueEmail('victim');
    await registerRawDevice(service, victim);
    for (const email_verified of [true, false]) {
      upstream.signInAs({ sub: `evil-${email_verified}`, email: victim, email_verified });
      const { result } = await signInWith(service, connection);
      assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    }
    const owner = await service.ctx.enabledUsers.findByEmail(victim);
    assert.equal((await service.ctx.upstream.list(owner?.id as string)).length, 0, 'nothing linked to the victim');

    // An address of the domain with an account already (made before the routing): the provider's word links it.
    const member = `carol@${domain}`;
    await service.ctx.enabledUsers.findOrCreate(member, Date.now());
    const mailsBefore = (await service.ctx.mailbox.list(100, member)).length;
    upstream.signInAs({ sub: 'carol-at-acme', email: member });
    const { result, verifier } = await signInWith(service, connection);
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
    const claims = await claimsFor(service, result.code as string, verifier);
    assert.equal(claims.email, member);
    assert.equal((await service.ctx.mailbox.list(100, member)).length, mailsBefore, 'no mailed code');
  });
});
