/**
 * The organization-aware Acme Wiki (issue 38), in Chromium, as `npm start` runs it: self-service
 * creation on, the organization roles `admin` (manages its organization) and `member` made by
 * the operator. A newcomer signs in to the wiki, follows its link to their account page, creates
 * an organization and invites a second address; the second person follows the mailed link,
 * signs in with that address and joins; each then works in the organization at the wiki (the
 * `organization` scope), whose page shows the organization and the role from the ID token's
 * claims (org_id, org_name, org_roles). axe-core on the wiki's pages that show them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningOidcApp } from '../src/oidc-app.ts';
import { emailAndCode, nextInvitationLink, startRegisteredOidcApp, watchedPage } from './fixtures.ts';
import { type Stack, startStack } from './harness.ts';
import { assertAccessible } from './visual.ts';

describe('Acme Wiki is organization-aware, in Chromium', { timeout: 4 * 60_000 }, () => {
  let stack: Stack;
  let wiki: RunningOidcApp;
  const violations: string[] = [];
  const run = Date.now().toString(36);
  const founder = `founder.${run}@example.com`;
  const colleague = `colleague.${run}@example.com`;
  const name = `Acme Corp ${run}`;

  before(async () => {
    stack = await startStack({ env: { SERVICE_IDP_ORGANIZATION_SELF_SERVICE: 'on' } });
    // What examples/demo/start.ts makes once.
    await stack.idp('orgs', 'roles', 'create', 'admin', '--manages-organization', 'yes');
    await stack.idp('orgs', 'roles', 'create', 'member', '--manages-organization', 'no');
    wiki = await startRegisteredOidcApp(stack, 'Acme Wiki');
  });
  after(async () => {
    assert.deepEqual(violations, [], 'no CSP violation');
    await wiki?.close();
    await stack?.close();
  });

  /** A new browser signed in at the wiki as `email`, by the hosted page and a mailed code. */
  async function signedInAtWiki(email: string, page?: Page): Promise<Page> {
    const browser = page ?? (await watchedPage(stack.browser, violations));
    await browser.goto(wiki.url);
    await browser.getByRole('link', { name: 'Sign in', exact: true }).click();
    await emailAndCode(stack, browser, email, { remember: true });
    await browser.waitForURL(`${wiki.url}/`);
    assert.equal(await browser.locator('#who').textContent(), email);
    return browser;
  }

  /** Works in the user's organization at the wiki; the profile lists the ID token's claims. */
  async function workInOrganization(page: Page): Promise<Record<string, unknown>> {
    await page.goto(wiki.url);
    await page.getByRole('link', { name: 'Work in one of your organizations' }).click();
    await page.waitForURL(`${wiki.url}/profile`);
    const claims: Record<string, unknown> = {};
    for (const claim of ['org_id', 'org_name', 'org_roles']) {
      const cell = page.locator(`[data-claim="${claim}"]`);
      claims[claim] = (await cell.count()) > 0 ? JSON.parse((await cell.textContent()) ?? 'null') : undefined;
    }
    return claims;
  }

  it('a newcomer creates an organization and invites a colleague; each sees the organization and their role in the ID token', async () => {
    // The newcomer: the wiki, then their account page by the wiki's link (the service's session, no code).
    const first = await signedInAtWiki(founder);
    assert.equal(await first.locator('#organization').count(), 0, 'no organization yet');
    await first.getByRole('link', { name: /Your organizations/ }).click();
    await first.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    await first.getByLabel('Name of the organization').fill(name);
    await first.getByRole('button', { name: 'Create the organization' }).click();
    await first.getByRole('heading', { name: `Manage ${name}`, level: 1 }).waitFor();

    const seen = (await stack.mails(colleague)).length;
    await first.getByLabel('Email address').fill(colleague);
    await first.getByRole('group', { name: 'Roles to give' }).getByLabel('member').check();
    await first.getByRole('button', { name: 'Send the invitation' }).click();
    await first.getByRole('status').filter({ hasText: 'The invitation was sent.' }).waitFor();

    // Back at the wiki: one organization, so no picker; the claims name it and the creator's role.
    const founderClaims = await workInOrganization(first);
    assert.match(String(founderClaims.org_id), /^org_/);
    assert.equal(founderClaims.org_name, name);
    assert.deepEqual(founderClaims.org_roles, ['admin']);
    await first.goto(wiki.url);
    assert.equal(
      (await first.locator('#organization').textContent())?.replace(/\s+/g, ' '),
      `Working in ${name} as admin.`,
      'the home page names the organization and the role',
    );
    await assertAccessible(first, 'the wiki working in an organization');

    // The colleague: the mailed link, the sign-in with the invited address, Join.
    const link = await nextInvitationLink(stack, colleague, seen);
    const second = await watchedPage(stack.browser, violations);
    await second.goto(link);
    await emailAndCode(stack, second, colleague, { remember: true });
    await second.getByRole('button', { name: `Join ${name}` }).click();
    await second.getByText(`You joined ${name}.`).waitFor();

    // At the wiki, the browser's service session signs them in; the organization comes with their role.
    await second.goto(wiki.url);
    await second.getByRole('link', { name: 'Sign in', exact: true }).click();
    await second.waitForURL(`${wiki.url}/`);
    assert.equal(await second.locator('#who').textContent(), colleague);
    const colleagueClaims = await workInOrganization(second);
    assert.equal(colleagueClaims.org_id, founderClaims.org_id, 'the same organization');
    assert.equal(colleagueClaims.org_name, name);
    assert.deepEqual(colleagueClaims.org_roles, ['member']);
    await assertAccessible(second, "the wiki's profile with the organization's claims");
  });
});
