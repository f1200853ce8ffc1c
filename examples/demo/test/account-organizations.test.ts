/**
 * Organizations in the account center, in Chromium (issue 38): with self-service on, a user signs
 * in to their account page, creates an organization (becoming its admin), invites a second
 * address from the organization's page; the invitation arrives at the test SMTP server; the
 * second user follows the mailed link, signs in with that address, joins and sees the
 * organization in their list; the admin changes their role; the second user leaves it after the
 * confirmation page, over http and over https (__Host- cookies). axe-core (no serious or critical violation) at phone and desktop sizes on the
 * organization pages, and no CSP violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { emailAndCode, nextInvitationLink, watchedPage } from './fixtures.ts';
import { type Stack, startStack } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

// Over https too (a TLS front): the account center's and the invitation's cookies are __Host- ones there.
for (const scheme of ['http', 'https'] as const)
  describe(`organizations in the account center, in Chromium, over ${scheme}`, { timeout: 4 * 60_000 }, () => {
    let stack: Stack;
    const violations: string[] = [];
    const run = Date.now().toString(36);
    const admin = `org-admin.${run}@example.com`;
    const invitee = `org-invitee.${run}@example.com`;
    const name = `Acme ${run}`;

    before(async () => {
      stack = await startStack({ https: scheme === 'https', env: { SERVICE_IDP_ORGANIZATION_SELF_SERVICE: 'on' } });
      // The operator's step before offering creation: the role creators get, and a plain one.
      await stack.idp('orgs', 'roles', 'create', 'admin', '--manages-organization', 'yes');
      await stack.idp('orgs', 'roles', 'create', 'member');
    });
    after(async () => {
      assert.deepEqual(violations, [], 'no CSP violation');
      await stack?.close();
    });

    /** A new browser signed in to its account page as `email` (the hosted sign-in, the mailed code). */
    async function accountPage(email: string): Promise<Page> {
      const page = await watchedPage(stack.browser, violations);
      await page.goto(`${stack.serviceUrl}/account`);
      await emailAndCode(stack, page, email, { remember: true });
      await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
      return page;
    }
    async function accessibleAtBothSizes(page: Page, what: string) {
      for (const [size, viewport] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(viewport);
        await assertAccessible(page, `${what} (${size})`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `${what} fits a ${size} (${overflow}px too wide)`);
      }
    }

    it('create, invite by mail, join, change the role, leave', async () => {
      const first = await accountPage(admin);
      await accessibleAtBothSizes(first, 'the account page with its organizations section');
      await first.getByLabel('Name of the organization').fill(name);
      await first.getByRole('button', { name: 'Create the organization' }).click();
      await first.getByRole('heading', { name: `Manage ${name}`, level: 1 }).waitFor();
      await first.getByRole('status').filter({ hasText: 'you are its admin' }).waitFor();

      // Invite the second address as a member.
      const seen = (await stack.mails(invitee)).length;
      await first.getByLabel('Email address').fill(invitee);
      await first.getByRole('group', { name: 'Roles to give' }).getByLabel('member').check();
      await first.getByRole('button', { name: 'Send the invitation' }).click();
      await first.getByRole('status').filter({ hasText: 'The invitation was sent.' }).waitFor();
      await accessibleAtBothSizes(first, "the organization admin's page");
      const link = await nextInvitationLink(stack, invitee, seen);

      // The second user follows the link, signs in with the invited address, joins.
      const second = await watchedPage(stack.browser, violations);
      await second.goto(link);
      await emailAndCode(stack, second, invitee, { remember: true });
      await second.getByRole('button', { name: `Join ${name}` }).click();
      await second.getByText(`You joined ${name}.`).waitFor();
      await second.getByRole('link', { name: 'Back to your account' }).click();
      const listed = second.locator('li[data-organization]', { hasText: name });
      await listed.waitFor();
      assert.match((await listed.textContent()) ?? '', /Your roles: member/);

      // The admin makes the member an admin too.
      await first.reload();
      const member = first.locator('li[data-member]', { hasText: invitee });
      await member
        .getByRole('group', { name: `Roles of ${invitee}` })
        .getByLabel('admin (manages the organization)')
        .check();
      await member.getByRole('button', { name: `Save the roles of ${invitee}` }).click();
      await first.getByRole('status').filter({ hasText: 'The roles were saved.' }).waitFor();
      await second.reload();
      assert.match((await second.locator('li[data-organization]', { hasText: name }).textContent()) ?? '', /Your roles: admin, member/);

      // The second user leaves, after the confirmation page.
      await second.getByRole('link', { name: `Leave ${name}` }).click();
      await second.getByRole('heading', { name: `Leave ${name}?`, level: 1 }).waitFor();
      await accessibleAtBothSizes(second, 'the confirmation of leaving');
      await second.getByRole('button', { name: `Yes, leave ${name}` }).click();
      await second.getByText(`You left ${name}.`).waitFor();
      await second.getByRole('link', { name: 'Back to your account' }).click();
      await second.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
      assert.equal(await second.locator('li[data-organization]', { hasText: name }).count(), 0);
      await first.reload();
      assert.equal(await first.locator('li[data-member]', { hasText: invitee }).count(), 0, 'gone from the admin’s list');
    });
  });
