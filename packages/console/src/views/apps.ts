import type { AdminClient, AdminClientList, AdminClientSecret, AdminNewClient } from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, PAGE_SIZE, pagedTable, replace, shownOnce, statusLine } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';

const lines = (area: HTMLTextAreaElement) =>
  area.value
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
const ALGS = ['RS256', 'ES256', 'EdDSA'];
const select = (name: string, options: string[], value?: string) =>
  h('select', { name }, ...options.map((option) => h('option', { value: option, selected: option === value }, option)));

/** Applications: the list, a registration form (keys shown once), an edit form and delete. */
export async function appsView(context: ViewContext): Promise<void> {
  const { root } = context;
  const line = statusLine();
  const output = h('div', {});
  const editing = context.param ? await api<AdminClient>('GET', `/clients/${encodeURIComponent(context.param)}`) : undefined;
  const load = async (cursor: string | undefined) => {
    const page = await api<AdminClientList>('GET', `/clients${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.clients, nextCursor: page.nextCursor };
  };
  const row = (client: AdminClient) => [
    h('a', { href: `#/apps/${encodeURIComponent(client.id)}` }, client.name),
    h('code', {}, client.id),
    document.createTextNode(
      client.registered ? M.apps.typeRegistered(client.type) : client.thirdParty ? M.apps.typeThirdParty(client.type) : client.type,
    ),
    document.createTextNode(client.mfaPolicy),
    canAct(context)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              if (!(await confirmAction(M.apps.confirmDelete(client.name)))) return;
              try {
                await api('DELETE', `/clients/${client.id}`);
                location.hash = '#/apps';
                context.refresh();
              } catch (error) {
                line.say(M.failed((error as Error).message), true);
              }
            },
          },
          M.apps.delete,
        )
      : null,
  ];
  const first = await load(undefined);
  replace(
    root,
    h('h1', {}, M.apps.heading),
    line.element,
    output,
    first.items.length === 0
      ? h('p', {}, M.apps.noneYet)
      : await pagedTable(
          M.apps.heading,
          [M.apps.colName, M.apps.colId, M.apps.colType, M.apps.colMfa, ''],
          async (cursor) => (cursor ? load(cursor) : first),
          row,
          (message) => line.say(M.failed(message), true),
        ),
    editing && canAct(context) ? editForm(editing, line, context) : null,
    editing && canAct(context) && editing.type === 'confidential' ? rotateSecret(editing, line) : null,
    canAct(context) ? createForm(line, output, context) : null,
  );
}

function createForm(line: ReturnType<typeof statusLine>, output: HTMLElement, context: ViewContext): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true });
  const origins = h('textarea', { name: 'origins', rows: '2' });
  const redirects = h('textarea', { name: 'redirects', rows: '2' });
  const postLogout = h('textarea', { name: 'postLogout', rows: '2' });
  const isPublic = h('input', { type: 'checkbox', name: 'public' });
  const mfa = select('mfaPolicy', [M.apps.optional, M.apps.required]);
  const passkeyMfa = h('input', { type: 'checkbox', name: 'passkeyMfa', checked: true });
  const thirdParty = h('input', { type: 'checkbox', name: 'thirdParty' });
  const alg = select('alg', ALGS, 'RS256');
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const made = await api<AdminNewClient>('POST', '/clients', {
            name: name.value,
            origins: lines(origins),
            redirectUris: lines(redirects),
            postLogoutRedirectUris: lines(postLogout),
            public: isPublic.checked,
            thirdParty: thirdParty.checked,
            idTokenSignedResponseAlg: alg.value,
          });
          if (mfa.value === 'required' || !passkeyMfa.checked)
            await api('PATCH', `/clients/${made.clientId}`, { mfaPolicy: mfa.value, passkeySatisfiesMfa: passkeyMfa.checked });
          replace(
            output,
            shownOnce(M.apps.clientId, made.clientId),
            shownOnce(M.apps.publishableKey, made.publishableKey),
            made.secretKey ? shownOnce(M.apps.secretKey, made.secretKey) : '',
            h('button', { type: 'button', onclick: () => context.refresh() }, M.close),
          );
          output.scrollIntoView();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, M.apps.create),
    field(M.apps.name, name),
    field(M.apps.origins, origins),
    field(M.apps.redirects, redirects),
    field(M.apps.postLogout, postLogout),
    field(M.apps.publicClient, isPublic),
    field(M.apps.mfaPolicy, mfa),
    field(M.apps.passkeyMfa, passkeyMfa),
    field(M.apps.thirdParty, thirdParty),
    field(M.apps.alg, alg),
    h('button', { type: 'submit' }, M.apps.create),
  );
}

/** The edit form: every field the PATCH takes, sent at once; the API checks them and its message is shown. */
function editForm(client: AdminClient, line: ReturnType<typeof statusLine>, context: ViewContext): HTMLElement {
  const mfa = select('mfaPolicy', [M.apps.optional, M.apps.required], client.mfaPolicy);
  const passkeyMfa = h('input', { type: 'checkbox', name: 'passkeyMfa', checked: client.passkeySatisfiesMfa });
  // A machine client signs no user in: no consent to show (the API refuses it).
  const thirdParty =
    client.type === 'machine' ? undefined : h('input', { type: 'checkbox', name: 'thirdParty', checked: client.thirdParty });
  const alg = select('alg', ALGS, client.idTokenSignedResponseAlg);
  const listed = (name: string, values: string[]) => {
    const area = h('textarea', { name, rows: '2' });
    area.value = values.join('\n');
    return area;
  };
  const origins = listed('origins', client.origins);
  const redirects = listed('redirects', client.redirectUris);
  const postLogout = listed('postLogout', client.postLogoutRedirectUris);
  // The send rules (docs/operations.md, SMS pumping and address rules): empty is the default, `none` an empty country list.
  const countries = listed('smsCountries', client.sendRules.smsCountries?.length === 0 ? ['none'] : (client.sendRules.smsCountries ?? []));
  const domains = listed('mailDomains', client.sendRules.mailDomains ?? []);
  const countryList = () => {
    const given = lines(countries);
    return given.length === 0 ? null : given.join() === 'none' ? [] : given;
  };
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          await api('PATCH', `/clients/${client.id}`, {
            origins: lines(origins),
            redirectUris: lines(redirects),
            mfaPolicy: mfa.value,
            passkeySatisfiesMfa: passkeyMfa.checked,
            ...(thirdParty ? { thirdParty: thirdParty.checked } : {}),
            idTokenSignedResponseAlg: alg.value,
            postLogoutRedirectUris: lines(postLogout),
            smsCountries: countryList(),
            mailDomains: lines(domains).length ? lines(domains) : null,
          });
          line.say(M.done);
          context.refresh();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, M.apps.editing(client.name)),
    field(M.apps.origins, origins),
    field(M.apps.redirects, redirects),
    field(M.apps.postLogout, postLogout),
    field(M.apps.mfaPolicy, mfa),
    field(M.apps.passkeyMfa, passkeyMfa),
    thirdParty ? field(M.apps.thirdParty, thirdParty) : null,
    field(M.apps.alg, alg),
    field(M.apps.smsCountries, countries),
    field(M.apps.mailDomains, domains),
    h('button', { type: 'submit' }, M.save),
  );
}

/** A confidential application's new secret key, after a confirmation, shown once (the old one stops at once). */
function rotateSecret(client: AdminClient, line: ReturnType<typeof statusLine>): HTMLElement {
  const output = h('div', {});
  return h(
    'section',
    { 'aria-label': M.apps.rotateSecret },
    h('h2', {}, M.apps.rotateSecret),
    h('p', {}, M.apps.rotateSecretHelp),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          if (!(await confirmAction(M.apps.confirmRotateSecret(client.name)))) return;
          try {
            const made = await api<AdminClientSecret>('POST', `/clients/${client.id}/secret`);
            replace(output, shownOnce(M.apps.secretKey, made.secretKey));
            output.scrollIntoView();
          } catch (error) {
            line.say(M.failed((error as Error).message), true);
          }
        },
      },
      M.apps.rotateSecret,
    ),
    output,
  );
}
