/**
 * Whether an organization's members need a second factor (`mfaRequired`, docs/organizations.md):
 * set and cleared by the operator through the admin API (PATCH, both databases) and the CLI
 * (`orgs update --mfa-required yes|no`, on its own data folder), each change an event.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { runCli, SQLITE_SUITE_ONLY, startTestService, type TestService } from '../support/helpers.js';

describe('an organization’s MFA requirement through the admin API', () => {
  let service: TestService;
  let api: ReturnType<typeof adminApi>;
  before(async () => {
    service = await startTestService();
    api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
  });
  after(() => service.close());

  it('PATCH mfaRequired sets and clears it, with an organization.updated event; a non-boolean is refused, nothing changed', async () => {
    const org = (await api('POST', '/organizations', { name: 'Vault' })).body;
    assert.equal(org.mfaRequired, false);
    const set = await api('PATCH', `/organizations/${org.id}`, { mfaRequired: true });
    assert.equal(set.status, 200);
    assert.equal(set.body.mfaRequired, true);
    assert.equal((await service.ctx.organizationAccess.find(org.id))?.mfaRequired, true);
    const { events } = await service.ctx.events.list({ type: 'organization.updated', limit: 5 });
    assert.equal(events[0]?.detail.mfaRequired, 'yes');
    assert.equal((await api('PATCH', `/organizations/${org.id}`, { mfaRequired: 'off' })).status, 400);
    assert.equal((await api('GET', `/organizations/${org.id}`)).body.mfaRequired, true);
    assert.equal((await api('PATCH', `/organizations/${org.id}`, { mfaRequired: false })).body.mfaRequired, false);
  });
});

describe('service-idp orgs update --mfa-required', SQLITE_SUITE_ONLY, () => {
  let data: string;
  const cli = (...args: string[]) => runCli([...args, '--data', data]);
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-orgs-mfa-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('sets and clears it; the list shows it; another value is a usage error', async () => {
    const made = await cli('orgs', 'create', '--name', 'Vault', '--json');
    assert.equal(made.code, 0, made.stderr);
    const { id } = JSON.parse(made.stdout);
    const set = await cli('orgs', 'update', id, '--mfa-required', 'yes', '--json');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(JSON.parse(set.stdout).mfaRequired, true);
    assert.match((await cli('orgs', 'list')).stdout, /Vault\s+required/);
    const bad = await cli('orgs', 'update', id, '--mfa-required', 'maybe');
    assert.notEqual(bad.code, 0);
    const cleared = await cli('orgs', 'update', id, '--mfa-required', 'no', '--json');
    assert.equal(JSON.parse(cleared.stdout).mfaRequired, false);
  });
});
