import type { AdminClient, AdminClientList, AdminNewClient } from 'service-protocol';
import { api } from '../api.js';
import { confirmAction, field, h, replace, shownOnce, statusLine, table } from '../dom.js';
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
  const { clients } = await api<AdminClientList>('GET', '/clients');
  const editing = clients.find((c) => c.id === context.param);
  const rows = clients.map((client) => [
    h('a', { href: `#/apps/${encodeURIComponent(client.id)}` }, client.name),
    h('code', {}, client.id),
    document.createTextNode(client.type),
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
  ]);
  replace(
    root,
    h('h1', {}, M.apps.heading),
    line.element,
    output,
    clients.length === 0
      ? h('p', {}, M.apps.noneYet)
      : table(M.apps.heading, [M.apps.colName, M.apps.colId, M.apps.colType, M.apps.colMfa, ''], rows),
    editing && canAct(context) ? editForm(editing, line, context) : null,
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
    field(M.apps.alg, alg),
    h('button', { type: 'submit' }, M.apps.create),
  );
}

function editForm(client: AdminClient, line: ReturnType<typeof statusLine>, context: ViewContext): HTMLElement {
  const mfa = select('mfaPolicy', [M.apps.optional, M.apps.required], client.mfaPolicy);
  const passkeyMfa = h('input', { type: 'checkbox', name: 'passkeyMfa', checked: client.passkeySatisfiesMfa });
  const alg = select('alg', ALGS, client.idTokenSignedResponseAlg);
  const postLogout = h('textarea', { name: 'postLogout', rows: '2' });
  postLogout.value = client.postLogoutRedirectUris.join('\n');
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          await api('PATCH', `/clients/${client.id}`, {
            mfaPolicy: mfa.value,
            passkeySatisfiesMfa: passkeyMfa.checked,
            idTokenSignedResponseAlg: alg.value,
            postLogoutRedirectUris: lines(postLogout),
          });
          line.say(M.done);
          context.refresh();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, M.apps.editing(client.name)),
    field(M.apps.mfaPolicy, mfa),
    field(M.apps.passkeyMfa, passkeyMfa),
    field(M.apps.alg, alg),
    field(M.apps.postLogout, postLogout),
    h('button', { type: 'submit' }, M.save),
  );
}
