/**
 * The console's APIs and Roles pages and a user's roles in Chromium (issue 37): an admin operator
 * registers an API (a refused identifier shows the API's message and registers nothing), edits
 * its permissions, makes a role choosing among them, assigns it to a user on their page and takes
 * it away behind a confirmation, then deletes the role and the API behind theirs; each change's
 * event names the operator. A viewer sees the pages without a form or an action. axe-core on each
 * page at phone and desktop sizes (no serious or critical violation), and no CSP refusal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';
import { consoleBrowser } from './support/console.ts';

const SIZES = { phone: { width: 375, height: 667 }, desktop: { width: 1280, height: 800 } };
const NOTES = 'https://notes.example.com';
const XSS_NAME = '<img src=x onerror="window.__xss=1">Notes';

describe('the operator console: APIs, roles and a user’s roles', { timeout: 6 * 60_000 }, () => {
  let stack: Stack;
  let browser: ReturnType<typeof consoleBrowser>;
  let adminPage: Page;
  const run = Date.now().toString(36);
  const admin = `admin.${run}@example.com`;
  const viewer = `viewer.${run}@example.com`;
  const person = `person.${run}@example.com`;

  /** axe-core at a phone's size, then at a desktop's. */
  const accessibleAtBothSizes = async (page: Page, label: string) => {
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      await browser.noSeriousViolations(page, `${label} (${size})`);
    }
  };
  const apis = async () =>
    (await stack.idp<{ apis: Array<{ identifier: string; name: string; permissions: string[] }> }>('apis', 'list')).apis;
  const rolesOf = async (email: string) =>
    (await stack.idp<{ roles: Array<{ name: string }> }>('users', 'roles', 'list', email)).roles.map((role) => role.name);
  const actors = async (type: string) =>
    (await stack.idp<{ events: Array<{ actor: string }> }>('events', '--type', type)).events.map((event) => event.actor);
  /** The form under its heading (the create and edit forms share labels). */
  const form = (page: Page, heading: string | RegExp) => page.locator('form').filter({ has: page.getByRole('heading', { name: heading }) });

  before(async () => {
    stack = await startStack();
    browser = consoleBrowser(stack);
    await stack.cli('operators', 'add', admin, '--role', 'admin');
    await stack.cli('operators', 'add', viewer);
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
  });

  it('registers an API (a refused identifier shows the API’s message and registers nothing), then edits its permissions', async () => {
    await browser.view(adminPage, 'apis');
    await adminPage.getByText('No APIs yet.').waitFor();
    await accessibleAtBothSizes(adminPage, 'APIs, none yet');
    const create = form(adminPage, 'Register an API');
    await create.getByLabel('Identifier (https URI or urn, the audience of its tokens)').fill('http://notes.example.com');
    await create.getByLabel('Name').fill(XSS_NAME);
    await create.getByLabel('Permissions (one per line, such as read:notes)').fill('read:notes\nwrite:notes');
    await create.getByRole('button', { name: 'Register an API' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Failed: An API identifier is an absolute https URI' }).waitFor();
    assert.deepEqual(await apis(), []);

    await create.getByLabel('Identifier (https URI or urn, the audience of its tokens)').fill(NOTES);
    await create.getByRole('button', { name: 'Register an API' }).click();
    const row = adminPage.getByRole('row', { name: new RegExp(NOTES.replaceAll('.', '\\.')) });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /read:notes, write:notes/);
    assert.ok(await adminPage.getByRole('link', { name: XSS_NAME }).isVisible(), 'the name is shown as text');

    await adminPage.getByRole('link', { name: XSS_NAME }).click();
    const edit = form(adminPage, /^Edit /);
    await edit.waitFor();
    await accessibleAtBothSizes(adminPage, 'API edit');
    await edit.getByLabel('Name').fill('Notes');
    await edit.getByLabel('Permissions (one per line, such as read:notes)').fill('read:notes\nwrite:notes\ndelete notes');
    await edit.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Failed: The permission "delete notes" is not a scope token' }).waitFor();
    assert.deepEqual((await apis())[0]?.permissions, ['read:notes', 'write:notes']);
    await edit.getByLabel('Permissions (one per line, such as read:notes)').fill('read:notes\nwrite:notes\ndelete:notes');
    await edit.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByRole('row', { name: /read:notes, write:notes, delete:notes|delete:notes, read:notes, write:notes/ }).waitFor();
    assert.deepEqual(await apis(), [{ ...(await apis())[0], name: 'Notes', permissions: ['delete:notes', 'read:notes', 'write:notes'] }]);
    assert.ok((await actors('api.created')).includes(`operator:${admin}`));
    assert.ok((await actors('api.updated')).includes(`operator:${admin}`));

    // Roles in its tokens, and the client its resource server introspects with: an unknown one is refused.
    const introspector = edit.getByLabel('Client id its resource server introspects tokens with (empty: none)');
    await introspector.fill('cli_nobody');
    await edit.getByLabel('Its access tokens also carry the user’s roles that grant its permissions').check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Failed:' }).waitFor();
    const stored = async () =>
      (await stack.idp<{ apis: Array<{ rolesInToken: boolean; resourceServerClientId: string | null }> }>('apis', 'list')).apis[0];
    assert.deepEqual(await stored(), { ...(await stored()), rolesInToken: false, resourceServerClientId: null });
    await introspector.fill('');
    await edit.getByRole('button', { name: 'Save' }).click();
    for (let i = 0; i < 40 && !(await stored())?.rolesInToken; i++) await new Promise((r) => setTimeout(r, 250));
    assert.equal((await stored())?.rolesInToken, true);
  });

  it('makes a role choosing permissions among the registered API’s', async () => {
    await browser.view(adminPage, 'roles');
    await adminPage.getByText('No roles yet.').waitFor();
    const create = form(adminPage, 'Make a role');
    await create.getByLabel('Name').fill('editor');
    const notes = create.getByRole('group', { name: `Notes (${NOTES})` });
    await notes.getByLabel('read:notes').check();
    await notes.getByLabel('write:notes').check();
    await accessibleAtBothSizes(adminPage, 'roles, a role being made');
    await create.getByRole('button', { name: 'Make a role' }).click();
    const row = adminPage.getByRole('row', { name: /editor/ });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Notes: read:notes, write:notes/);
    await accessibleAtBothSizes(adminPage, 'roles');
    await screenshot(adminPage, 'console-roles');
    assert.ok((await actors('role.created')).includes(`operator:${admin}`));
  });

  it('assigns the role to a user on their page and removes it behind a confirmation; the events name the operator', async () => {
    await browser.view(adminPage, 'users');
    await adminPage.getByLabel('Email address (or its beginning)').fill(person);
    await adminPage.getByRole('button', { name: 'Search' }).click();
    await adminPage.getByRole('link', { name: person }).click();
    await adminPage.locator('main[data-ready="users"] h1', { hasText: person }).waitFor();
    await adminPage.getByText('No roles.').waitFor();
    await adminPage.getByLabel('Role', { exact: true }).selectOption({ label: 'editor' });
    await adminPage.getByRole('button', { name: 'Assign' }).click();
    const held = adminPage.getByRole('table', { name: 'Roles' });
    await held.getByRole('row', { name: /editor.*Notes: read:notes, write:notes/ }).waitFor();
    assert.deepEqual(await rolesOf(person), ['editor']);
    await accessibleAtBothSizes(adminPage, 'user detail with a role');
    await screenshot(adminPage, 'console-user-roles');

    await held.getByRole('button', { name: 'Remove' }).click();
    await browser.noSeriousViolations(adminPage, 'role removal confirmation');
    await browser.confirm(adminPage);
    await adminPage.getByText('No roles.').waitFor();
    assert.deepEqual(await rolesOf(person), []);
    assert.ok((await actors('role.assigned')).includes(`operator:${admin}`));
    assert.ok((await actors('role.unassigned')).includes(`operator:${admin}`));
  });

  it('a viewer sees the APIs, roles and a user’s roles without a form or an action', async () => {
    await stack.cli('users', 'roles', 'add', person, 'editor');
    const page = await browser.consoleSignIn(viewer);
    for (const name of ['apis', 'roles']) {
      await browser.view(page, name);
      await page.getByRole('cell', { name: name === 'apis' ? NOTES : 'editor' }).waitFor();
      assert.equal(await page.locator('main form, main button.danger').count(), 0, `${name} has no form or action for a viewer`);
      await accessibleAtBothSizes(page, `${name} as a viewer`);
    }
    await browser.view(page, 'users');
    await page.getByLabel('Email address (or its beginning)').fill(person);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: person }).click();
    await page
      .getByRole('table', { name: 'Roles' })
      .getByRole('row', { name: /editor/ })
      .waitFor();
    assert.equal(await page.getByRole('button', { name: 'Remove' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Assign' }).count(), 0);
    await page.context().close();
  });

  it('deletes the role and the API behind their confirmations', async () => {
    await browser.view(adminPage, 'roles');
    await adminPage
      .getByRole('row', { name: /editor/ })
      .getByRole('button', { name: 'Delete' })
      .click();
    await browser.confirm(adminPage);
    await adminPage.getByText('No roles yet.').waitFor();
    assert.deepEqual(await rolesOf(person), [], 'a deleted role leaves its holders');

    await browser.view(adminPage, 'apis');
    await adminPage.getByRole('row', { name: /Notes/ }).getByRole('button', { name: 'Delete' }).click();
    await browser.noSeriousViolations(adminPage, 'API deletion confirmation');
    await browser.confirm(adminPage);
    await adminPage.getByText('No APIs yet.').waitFor();
    assert.deepEqual(await apis(), []);
    assert.ok((await actors('role.deleted')).includes(`operator:${admin}`));
    assert.ok((await actors('api.deleted')).includes(`operator:${admin}`));
    assert.equal(await adminPage.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'no injected script ran');
    assert.deepEqual(browser.violations, [], 'no CSP refusal');
  });
});
