/** Shared set-up of the verified-domain tests: a service resolving TXT records at a DNS server the test controls. */
import { randomBytes } from 'node:crypto';
import { adminApi } from '../support/admin-api.js';
import { startDns, type TestDns } from '../support/dns-server.js';
import { startTestService, type TestService, type TestServiceOptions } from '../support/helpers.js';

export interface DomainStack {
  service: TestService;
  dns: TestDns;
  api: ReturnType<typeof adminApi>;
}

export async function startDomainStack(options: TestServiceOptions = {}): Promise<DomainStack> {
  const dns = await startDns();
  const service = await startTestService({ testMode: true, ...options, env: { SERVICE_IDP_DNS_SERVERS: dns.server, ...options.env } });
  const api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
  return { service, dns, api };
}

/** A domain no other test uses (the unique index on verified domains spans the whole database). */
export const uniqueDomain = (label = 'acme') => `${label}-${randomBytes(4).toString('hex')}.example`;

/** An organization, made as the operator makes one. */
export async function newOrganization(service: TestService, name = 'Acme'): Promise<string> {
  return (await service.ctx.organizations.create({ name }, 'test')).id;
}

/** Claims a domain and publishes its TXT record, as the organization's DNS administrator does; then verifies it. */
export async function verifiedDomain({ api, dns }: DomainStack, org: string, domain = uniqueDomain()): Promise<string> {
  const claimed = await api('POST', `/organizations/${org}/domains`, { domain });
  if (claimed.status !== 201) throw new Error(`claim: ${JSON.stringify(claimed.body)}`);
  dns.publish(claimed.body.record.name, [[claimed.body.record.value]]);
  const verified = await api('POST', `/organizations/${org}/domains/${domain}/verify`);
  if (verified.status !== 200) throw new Error(`verify: ${JSON.stringify(verified.body)}`);
  return domain;
}
