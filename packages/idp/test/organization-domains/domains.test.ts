/**
 * Verified domains (organization-domains/): an organization claims a domain, proves it with the
 * TXT record the claim names (looked up at a real DNS server on loopback) or an operator vouches,
 * then routes its addresses to its own provider. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerRawDevice, uniqueEmail } from '../support/helpers.js';
import { type DomainStack, newOrganization, startDomainStack, uniqueDomain, verifiedDomain } from './domain-helpers.js';

describe('organization domains: claim, prove, route', () => {
  let stack: DomainStack;
  before(async () => {
    stack = await startDomainStack();
  });
  after(async () => {
    await stack.service.close();
    await stack.dns.close();
  });

  it('a claim names the TXT record to publish; verify looks it up and marks the domain verified by DNS', async () => {
    const { api, dns } = stack;
    const org = await newOrganization(stack.service);
    const domain = uniqueDomain();
    const claimed = await api('POST', `/organizations/${org}/domains`, { domain: domain.toUpperCase() });
    assert.equal(claimed.status, 201);
    assert.equal(claimed.body.domain, domain, 'kept in lower case');
    assert.equal(claimed.body.verified, false);
    assert.equal(claimed.body.record.name, `_service-idp-verification.${domain}`);
    assert.match(claimed.body.record.value, /^service-idp-domain-verification=[A-Za-z0-9_-]{20,}$/);

    const early = await api('POST', `/organizations/${org}/domains/${domain}/verify`);
    assert.equal(early.status, 400, 'nothing published yet');
    assert.match(early.body.message, /No TXT record/);
    assert.equal((await api('GET', `/organizations/${org}/domains/${domain}`)).body.verified, false);

    // Long values are split into 255-byte strings by DNS servers: the strings of one record are joined.
    const value: string = claimed.body.record.value;
    dns.publish(claimed.body.record.name, [['v=spf1 -all'], [value.slice(0, 10), value.slice(10)]]);
    const verified = await api('POST', `/organizations/${org}/domains/${domain}/verify`);
    assert.equal(verified.status, 200);
    assert.equal(verified.body.verified, true);
    assert.equal(verified.body.verifiedBy, 'dns');
    assert.ok(dns.asked.includes(claimed.body.record.name));

    const listed = await api('GET', `/organizations/${org}/domains`);
    assert.deepEqual(
      listed.body.domains.map((d: { domain: string; verified: boolean }) => [d.domain, d.verified]),
      [[domain, true]],
    );
    const { events } = await stack.service.ctx.events.list({ type: 'organization.domain_verified', limit: 50 });
    assert.ok(events.some((e) => e.detail?.domain === domain && e.detail?.via === 'dns'));
  });

  it('an operator vouches for a domain without DNS; the route names a connection and the mailed-code and join rules', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = uniqueDomain();
    await api('POST', `/organizations/${org}/domains`, { domain });
    const vouched = await api('POST', `/organizations/${org}/domains/${domain}/vouch`);
    assert.equal(vouched.status, 200);
    assert.match(vouched.body.verifiedBy, /^adk_/, 'the admin key that vouched');
    assert.notEqual(vouched.body.verifiedBy, 'dns');
    const connection = await service.ctx.connections.create(
      { preset: 'oidc', issuer: 'http://127.0.0.1:9/', clientId: 'acme', clientSecret: 's' },
      'test',
    );
    await service.ctx.organizations.createRole({ name: 'routed-member' }, 'test');
    const routed = await api('PATCH', `/organizations/${org}/domains/${domain}`, {
      connectionId: connection.id,
      joinRole: 'routed-member',
    });
    assert.equal(routed.status, 200);
    assert.deepEqual([routed.body.connectionId, routed.body.allowEmailCode, routed.body.joinRole], [connection.id, false, 'routed-member']);
    assert.equal(await service.ctx.domainRouting.upstreamFor(`someone@${domain}`), connection.id);
    const allowed = await api('PATCH', `/organizations/${org}/domains/${domain}`, { allowEmailCode: true });
    assert.equal(allowed.body.allowEmailCode, true);
    assert.equal(await service.ctx.domainRouting.upstreamFor(`someone@${domain}`), undefined, 'mailed codes allowed: nothing forced');
    assert.deepEqual(await service.ctx.domainRouting.domainsOf(connection.id), [domain]);

    // Deleting the connection stops the routing (its foreign key clears the route).
    await service.ctx.connections.delete(connection.id, 'test');
    assert.equal((await api('GET', `/organizations/${org}/domains/${domain}`)).body.connectionId, null);
  });

  it('a route to a connection that does not exist, or a claim for an organization that does not, is a 404 and changes nothing', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = await verifiedDomain(stack, org);
    const missing = await api('PATCH', `/organizations/${org}/domains/${domain}`, { connectionId: 'con_nope' });
    assert.equal(missing.status, 404);
    assert.equal((await api('GET', `/organizations/${org}/domains/${domain}`)).body.connectionId, null);
    const noOrg = await api('POST', '/organizations/org_nope/domains', { domain: uniqueDomain() });
    assert.equal(noOrg.status, 404);
  });

  it('a removed domain routes nothing any more', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = await verifiedDomain(stack, org);
    const connection = await service.ctx.connections.create(
      { preset: 'oidc', issuer: 'http://127.0.0.1:9/', clientId: 'acme2', clientSecret: 's' },
      'test',
    );
    await api('PATCH', `/organizations/${org}/domains/${domain}`, { connectionId: connection.id });
    assert.equal(await service.ctx.domainRouting.upstreamFor(`a@${domain}`), connection.id);
    assert.equal((await api('DELETE', `/organizations/${org}/domains/${domain}`)).status, 204);
    assert.equal(await service.ctx.domainRouting.upstreamFor(`a@${domain}`), undefined);
    assert.equal((await api('GET', `/organizations/${org}/domains/${domain}`)).status, 404);
  });

  it('a new user at a verified domain with a join role joins its organization with that role; an existing user and other domains do not', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = await verifiedDomain(stack, org);
    const before = uniqueEmail().replace(/@.*/, `@${domain}`);
    await registerRawDevice(service, before);
    await service.ctx.organizations.createRole({ name: 'joined-viewer' }, 'test');
    const chosen = await api('PATCH', `/organizations/${org}/domains/${domain}`, { joinRole: 'joined-viewer' });
    assert.equal(chosen.status, 200);

    const newcomer = uniqueEmail().replace(/@.*/, `@${domain}`);
    await registerRawDevice(service, newcomer);
    await registerRawDevice(service, uniqueEmail());
    const members = (await api('GET', `/organizations/${org}/members`)).body.members as {
      email: string;
      roles: string[];
      addedBy: string;
    }[];
    assert.deepEqual(
      members.map((m) => [m.email, m.roles]),
      [[newcomer, ['joined-viewer']]],
      'the newcomer alone, with the join role; the user who existed before is not joined',
    );
    const { events } = await service.ctx.events.list({ type: 'organization.member_added', limit: 50 });
    const joined = events.find((e) => e.detail?.organizationId === org);
    assert.equal(joined?.actor, `domain:${domain}`);
    assert.equal(joined?.detail?.roles, 'joined-viewer');

    // Signing in again (the same lookup every first factor makes) does not join twice or fail.
    await service.ctx.enabledUsers.findOrCreate(newcomer, Date.now());
    assert.equal((await api('GET', `/organizations/${org}/members`)).body.members.length, 1);
  });

  it('a join role that is no organization role is refused with a 400 and not stored', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    const domain = await verifiedDomain(stack, org);
    const answer = await api('PATCH', `/organizations/${org}/domains/${domain}`, { joinRole: 'no-such-role' });
    assert.equal(answer.status, 400);
    assert.match(answer.body.message, /No organization role/);
    assert.equal((await api('GET', `/organizations/${org}/domains/${domain}`)).body.joinRole, null);
  });

  it('refuses what is not a domain with a 400 and no claim', async () => {
    const { api, service } = stack;
    const org = await newOrganization(service);
    for (const domain of [
      'https://acme.example',
      'acme',
      '10.0.0.1',
      'acme..example',
      '-acme.example',
      'a@b.example',
      'acme.example/path',
    ]) {
      const answer = await api('POST', `/organizations/${org}/domains`, { domain });
      assert.equal(answer.status, 400, domain);
    }
    assert.deepEqual((await api('GET', `/organizations/${org}/domains`)).body.domains, []);
  });
});
