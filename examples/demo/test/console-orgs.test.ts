/**
 * The console's Organizations and Organization roles pages in Chromium (issue 38): an admin
 * operator makes an organization role choosing among an API's permissions and edits it, makes an
 * organization, adds a user as a member with a role (an unknown address shows why and adds
 * nothing) and changes their roles, invites an address (the mail arrives, naming the
 * organization), resends and revokes it, claims a domain and proves it by the TXT record the page
 * shows (served by a DNS server on loopback), vouches for another, routes the verified one to a
 * connection with mailed codes allowed, changes the settings, removes the member and deletes the
 * organization behind a typed confirmation; each change's event names the operator. A viewer sees
 * every page without a form or an action. axe-core on each page at phone and desktop sizes (no
 * serious or critical violation), and no CSP refusal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startDns, type TestDns } from '../../../packages/idp/test/support/dns-server.ts';
import { SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';
import { consoleBrowser } from './support/console.ts';

const SIZES = { phone: { width: 375, height: 667 }, desktop: { width: 1280, height: 800 } };
const NOTES = 'https://notes.example.com';
const XSS_NAME = '<img src=x onerror="window.__xss=1">Acme';

interface Member {
  email: string;
  roles: string[];
}
interface Invitation {
  id: string;
  email: string;
  state: string;
  roles: string[];
}
interface Claim {
  domain: string;
  verified: boolean;
  verifiedBy: string | null;
  connectionId: string | null;
  allowEmailCode: boolean;
  joinRole: string | null;
}

describe('the operator console: organizations and organization roles', { timeout: 8 * 60_000 }, () => {
  let dns: TestDns;
  let stack: Stack;
  let browser: ReturnType<typeof consoleBrowser>;
  let adminPage: Page;
  let orgId = '';
  let connectionId = '';
  const run = Date.now().toString(36);
  const admin = `admin.${run}@example.com`;
  const viewer = `viewer.${run}@example.com`;
  const person = `person.${run}@example.com`;
  const invitee = `invitee.${run}@example.com`;
  const provenDomain = `acme-${run}.example`;
  const vouchedDomain = `acme-eu-${run}.example`;

  /** axe-core at a phone's size, then at a desktop's. */
  const accessibleAtBothSizes = async (page: Page, label: string) => {
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      await browser.noSeriousViolations(page, `${label} (${size})`);
    }
  };
  const organizations = async () =>
    (
      await stack.idp<{ organizations: Array<{ id: string; name: string; externalId: string | null; mfaRequired: boolean }> }>(
        'orgs',
        'list',
      )
    ).organizations;
  const members = async () =>
    (await stack.idp<{ members: Member[] }>('orgs', 'members', 'list', orgId)).members.map((m) => [m.email, m.roles]);
  const invitations = async () => (await stack.idp<{ invitations: Invitation[] }>('orgs', 'invitations', 'list', orgId)).invitations;
  const claims = async () => (await stack.idp<{ domains: Claim[] }>('orgs', 'domains', 'list', orgId)).domains;
  const orgRoles = async () =>
    (
      await stack.idp<{ roles: Array<{ name: string; permissions: Array<{ permission: string }>; managesOrganization: boolean }> }>(
        'orgs',
        'roles',
        'list',
      )
    ).roles.map((role) => [role.name, role.permissions.map((grant) => grant.permission), role.managesOrganization]);
  const actors = async (type: string) =>
    (await stack.idp<{ events: Array<{ actor: string }> }>('events', '--type', type)).events.map((event) => event.actor);
  /** The form under its heading (several forms share labels). */
  const form = (page: Page, heading: string | RegExp) => page.locator('form').filter({ has: page.getByRole('heading', { name: heading }) });
  /** Waits until `check` holds (the page's call and the CLI's read race), at most 10 s. */
  const eventually = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 40 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.ok(await check(), what);
  };
  const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text });
  const onOrganization = (page: Page) => browser.view(page, 'orgs', orgId);

  before(async () => {
    dns = await startDns();
    stack = await startStack({ env: { SERVICE_IDP_DNS_SERVERS: dns.server } });
    browser = consoleBrowser(stack);
    await stack.cli('operators', 'add', admin, '--role', 'admin');
    await stack.cli('operators', 'add', viewer);
    await stack.cli('apis', 'create', '--identifier', NOTES, '--name', 'Notes', '--permissions', 'read:notes,write:notes');
    await stack.cli('orgs', 'roles', 'create', 'viewer', '--grant', `${NOTES}=read:notes`);
    // Acme's own provider: a connection no application shows as a button, for the route.
    connectionId = (
      await stack.idp<{ id: string }>(
        ...['connections', 'create', '--preset', 'oidc', '--upstream-issuer', 'https://sso.acme.example', '--client-id', 'acme'],
        ...['--client-secret', 'acme-secret', '--name', 'Acme SSO'],
      )
    ).id;
    // The person is a user: they signed in to their account page.
    const page = await browser.freshPage();
    await page.goto(`${stack.serviceUrl}/account`);
    await browser.emailAndCode(page, person);
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    await page.context().close();
    // The admin's sign-in mails a code too: past the send spacing, so it is not withheld.
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS));
    adminPage = await browser.consoleSignIn(admin);
  });
  after(async () => {
    await stack?.close();
    await dns?.close();
  });

  it('makes an organization role choosing among the API’s permissions, then edits it', async () => {
    await browser.view(adminPage, 'orgRoles');
    const create = form(adminPage, 'Make an organization role');
    await create.getByLabel('Name').fill('editr');
    await create
      .getByRole('group', { name: `Notes (${NOTES})` })
      .getByLabel('read:notes')
      .check();
    await accessibleAtBothSizes(adminPage, 'organization roles, one being made');
    await create.getByRole('button', { name: 'Make an organization role' }).click();
    await adminPage.getByRole('link', { name: 'editr' }).click();
    const edit = form(adminPage, 'Edit the organization role editr');
    await edit.waitFor();
    await edit.getByLabel('Name').fill('editor');
    await edit
      .getByRole('group', { name: `Notes (${NOTES})` })
      .getByLabel('write:notes')
      .check();
    await edit.getByLabel('Manages its organization').check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByRole('row', { name: /editor \(manages its organization\).*Notes: read:notes, write:notes/ }).waitFor();
    await accessibleAtBothSizes(adminPage, 'organization roles');
    assert.deepEqual(await orgRoles(), [
      ['editor', ['read:notes', 'write:notes'], true],
      ['viewer', ['read:notes'], false],
    ]);
    assert.ok((await actors('organization_role.created')).includes(`operator:${admin}`));
    assert.ok((await actors('organization_role.updated')).includes(`operator:${admin}`));
  });

  it('makes an organization, adds a member with a role (an unknown address adds nothing), and changes their roles', async () => {
    await browser.view(adminPage, 'orgs');
    await adminPage.getByText('No organizations yet.').waitFor();
    await accessibleAtBothSizes(adminPage, 'organizations, none yet');
    const create = form(adminPage, 'Make an organization');
    await create.getByLabel('Name').fill(XSS_NAME);
    await create.getByRole('button', { name: 'Make an organization' }).click();
    await adminPage.locator('main[data-ready="orgs"] h1', { hasText: XSS_NAME }).waitFor();
    const [made] = await organizations();
    assert.equal(made?.name, XSS_NAME, 'the name is stored and shown as text');
    orgId = made?.id ?? '';

    const add = form(adminPage, 'Add a member');
    await add.getByLabel('User (address or id)').fill(`nobody.${run}@example.com`);
    await add.getByRole('button', { name: 'Add' }).click();
    await status(adminPage, `Failed: No user nobody.${run}@example.com`).waitFor();
    assert.deepEqual(await members(), []);

    await add.getByLabel('User (address or id)').fill(person);
    await add.getByRole('group', { name: 'Organization roles' }).getByLabel('editor').check();
    await add.getByRole('button', { name: 'Add' }).click();
    const table = adminPage.getByRole('table', { name: 'Members' });
    await table.getByRole('row', { name: new RegExp(person.replaceAll('.', '\\.')) }).waitFor();
    assert.deepEqual(await members(), [[person, ['editor']]]);
    await accessibleAtBothSizes(adminPage, 'an organization with a member');
    await adminPage.setViewportSize(SIZES.phone);
    await screenshot(adminPage, 'console-organization-phone');
    await adminPage.setViewportSize(SIZES.desktop);

    const change = form(adminPage, 'Change a member’s roles');
    await change.getByLabel('Member').selectOption({ label: person });
    const held = change.getByRole('group', { name: 'Organization roles' });
    assert.equal(await held.getByLabel('editor').isChecked(), true, 'the member’s roles are ticked');
    await held.getByLabel('viewer').check();
    await held.getByLabel('editor').uncheck();
    await change.getByRole('button', { name: 'Save roles' }).click();
    await eventually('the member’s roles changed', async () => JSON.stringify(await members()) === JSON.stringify([[person, ['viewer']]]));
    for (const type of ['organization.created', 'organization.member_added', 'organization.member_roles_changed'])
      assert.ok((await actors(type)).includes(`operator:${admin}`), type);
  });

  it('invites an address with a role: the mail arrives naming the organization; resends it, then revokes it', async () => {
    await onOrganization(adminPage);
    const invite = form(adminPage, 'Invite by email');
    await invite.getByLabel('Email address').fill(invitee);
    await invite.getByRole('group', { name: 'Organization roles' }).getByLabel('editor').check();
    await invite.getByRole('button', { name: 'Send the invitation' }).click();
    await status(adminPage, `Invitation mailed to ${invitee}.`).waitFor();
    await adminPage
      .getByRole('table', { name: 'Invitations' })
      .getByRole('row', { name: /pending/ })
      .waitFor();
    await eventually('the invitation mail arrived', async () => (await stack.mails(invitee)).length === 1);
    const [mail] = await stack.mails(invitee);
    assert.match(`${mail?.subject}\n${mail?.text}`, /Acme/, 'the mail names the organization');
    assert.match(mail?.text ?? '', /\/account\/invitations\/accept\?token=/);
    assert.deepEqual(
      (await invitations()).map((i) => [i.email, i.state, i.roles]),
      [[invitee, 'pending', ['editor']]],
    );
    await accessibleAtBothSizes(adminPage, 'an organization with an invitation');

    await adminPage.getByRole('button', { name: `Resend to ${invitee}` }).click();
    await status(adminPage, `A new link was mailed to ${invitee}`).waitFor();
    await eventually('the new link arrived', async () => (await stack.mails(invitee)).length === 2);
    const [resent] = await stack.mails(invitee);
    assert.notEqual(resent?.text, mail?.text, 'a new link');

    await adminPage.getByRole('button', { name: `Revoke the invitation of ${invitee}` }).click();
    await browser.noSeriousViolations(adminPage, 'revoking an invitation, confirmation');
    await browser.confirm(adminPage);
    await adminPage
      .getByRole('table', { name: 'Invitations' })
      .getByRole('row', { name: /revoked/ })
      .waitFor();
    assert.deepEqual(
      (await invitations()).map((i) => i.state),
      ['revoked'],
    );
    assert.equal(await adminPage.getByRole('button', { name: `Revoke the invitation of ${invitee}` }).count(), 0);
    for (const type of ['organization.invitation_sent', 'organization.invitation_revoked'])
      assert.ok((await actors(type)).includes(`operator:${admin}`), type);
  });

  it('claims a domain, proves it by the TXT record shown, vouches for another, routes the verified one to a connection', async () => {
    await onOrganization(adminPage);
    const claim = form(adminPage, 'Claim a domain');
    await claim.getByLabel('Domain (such as example.com)').fill(provenDomain);
    await claim.getByRole('button', { name: 'Claim' }).click();
    const proven = adminPage.getByRole('region', { name: provenDomain });
    await proven.getByText('waiting for its DNS record').waitFor();
    const name = ((await proven.locator('dl.record dd code').nth(0).textContent()) ?? '').trim();
    const value = ((await proven.locator('dl.record dd code').nth(1).textContent()) ?? '').trim();
    assert.equal(name, `_service-idp-verification.${provenDomain}`);
    assert.match(value, /^service-idp-domain-verification=/);
    await accessibleAtBothSizes(adminPage, 'a domain waiting for its record');
    await screenshot(adminPage, 'console-organization-domain');

    // Not published yet: the proof fails and says why; the claim stays pending.
    await proven.getByRole('button', { name: `Verify ${provenDomain}` }).click();
    await status(adminPage, 'Failed:').waitFor();
    assert.deepEqual(
      (await claims()).map((c) => [c.domain, c.verified]),
      [[provenDomain, false]],
    );
    // Acme's DNS administrator publishes what the page showed.
    dns.publish(name, [[value]]);
    await proven.getByRole('button', { name: `Verify ${provenDomain}` }).click();
    await adminPage.getByRole('region', { name: provenDomain }).locator('[data-state="verified"]').waitFor();

    await claim.getByLabel('Domain (such as example.com)').fill(vouchedDomain);
    await claim.getByRole('button', { name: 'Claim' }).click();
    await adminPage.getByRole('button', { name: `Vouch for ${vouchedDomain}` }).click();
    await browser.confirm(adminPage);
    await adminPage.getByRole('region', { name: vouchedDomain }).locator('[data-state="verified"]').waitFor();

    const routed = adminPage.getByRole('region', { name: provenDomain });
    await routed.getByLabel(`Provider for ${provenDomain} (a connection)`).selectOption(connectionId);
    await routed.getByLabel(`Addresses at ${provenDomain} may still sign in by mailed code`).check();
    // A role that manages the organization is not offered to join with (the service refuses it).
    const joinAs = routed.getByLabel(`New users at ${provenDomain} join as`);
    assert.equal(await joinAs.locator('option', { hasText: 'editor' }).count(), 0);
    await joinAs.selectOption('viewer');
    await routed.getByRole('button', { name: `Save the sign-in of ${provenDomain}` }).click();
    await adminPage.getByRole('region', { name: provenDomain }).getByText('routed to Acme SSO; mailed codes allowed').waitFor();
    await adminPage.getByRole('region', { name: provenDomain }).getByText('join the organization as viewer').waitFor();
    await accessibleAtBothSizes(adminPage, 'verified domains, one routed');
    const byDomain = new Map((await claims()).map((c) => [c.domain, c]));
    assert.deepEqual(
      [
        byDomain.get(provenDomain)?.verifiedBy,
        byDomain.get(provenDomain)?.connectionId,
        byDomain.get(provenDomain)?.allowEmailCode,
        byDomain.get(provenDomain)?.joinRole,
      ],
      ['dns', connectionId, true, 'viewer'],
    );
    assert.deepEqual([byDomain.get(vouchedDomain)?.verifiedBy, byDomain.get(vouchedDomain)?.connectionId], [`operator:${admin}`, null]);
    for (const type of ['organization.domain_added', 'organization.domain_verified', 'organization.domain_updated'])
      assert.ok((await actors(type)).includes(`operator:${admin}`), type);
  });

  it('changes the organization’s settings: name, external id, MFA required', async () => {
    await onOrganization(adminPage);
    const settings = form(adminPage, 'Settings');
    await settings.getByLabel('Name').fill('Acme Inc');
    await settings.getByLabel('External id (the id a provisioning system knows it by; optional)').fill('crm-42');
    await settings.getByLabel('Its members need a second factor').check();
    await settings.getByRole('button', { name: 'Save' }).click();
    await adminPage.locator('main[data-ready="orgs"] h1', { hasText: 'Acme Inc' }).waitFor();
    const [organization] = await organizations();
    assert.deepEqual([organization?.name, organization?.externalId, organization?.mfaRequired], ['Acme Inc', 'crm-42', true]);
    assert.ok((await actors('organization.updated')).includes(`operator:${admin}`));
  });

  it('a viewer sees organizations, one’s members, invitations and domains, and the organization roles, without a form or an action', async () => {
    const page = await browser.consoleSignIn(viewer);
    for (const name of ['orgs', 'orgRoles']) {
      await browser.view(page, name);
      await page.getByRole('table').waitFor();
      assert.equal(await page.locator('main form, main button').count(), 0, `${name} has no form or action for a viewer`);
      await accessibleAtBothSizes(page, `${name} as a viewer`);
    }
    await browser.view(page, 'orgs');
    await page.getByRole('link', { name: 'Acme Inc' }).click();
    await page.locator('main[data-ready="orgs"] h1', { hasText: 'Acme Inc' }).waitFor();
    await page
      .getByRole('table', { name: 'Members' })
      .getByRole('row', { name: new RegExp(person.replaceAll('.', '\\.')) })
      .waitFor();
    await page.getByRole('table', { name: 'Invitations' }).waitFor();
    await page.getByRole('region', { name: provenDomain }).getByText('routed to Acme SSO').waitFor();
    assert.equal(await page.locator('main form, main button').count(), 0, 'the organization’s page has no form or action for a viewer');
    await accessibleAtBothSizes(page, 'an organization as a viewer');
    await page.context().close();
  });

  it('removes a domain and the member behind confirmations, and deletes the organization behind its typed name', async () => {
    await onOrganization(adminPage);
    await adminPage.getByRole('button', { name: `Remove ${vouchedDomain}` }).click();
    await browser.confirm(adminPage);
    await adminPage.getByRole('region', { name: vouchedDomain }).waitFor({ state: 'detached' });
    assert.deepEqual(
      (await claims()).map((c) => c.domain),
      [provenDomain],
    );

    await adminPage.getByRole('button', { name: `Remove ${person}` }).click();
    await browser.confirm(adminPage);
    await adminPage.getByText('No members yet.').waitFor();
    assert.deepEqual(await members(), []);

    await adminPage.getByRole('button', { name: 'Delete the organization' }).click();
    const dialog = adminPage.getByRole('dialog');
    await browser.noSeriousViolations(adminPage, 'deleting an organization, confirmation');
    await dialog.getByLabel('Organization name').fill('Acme');
    assert.equal(await dialog.getByRole('button', { name: 'Confirm' }).isDisabled(), true, 'not until the name is typed whole');
    await dialog.getByLabel('Organization name').fill('Acme Inc');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await adminPage.getByText('No organizations yet.').waitFor();
    assert.deepEqual(await organizations(), []);
    for (const type of ['organization.domain_removed', 'organization.member_removed', 'organization.deleted'])
      assert.ok((await actors(type)).includes(`operator:${admin}`), type);
    assert.equal(await adminPage.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'no injected script ran');
    assert.deepEqual(browser.violations, [], 'no CSP refusal');
  });
});
