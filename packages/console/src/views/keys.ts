import type { AdminKeyInfo, AdminKeyList, AdminNewKey, AdminOperator, AdminOperatorList, AdminSigningKeyList } from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, PAGE_SIZE, pagedTable, replace, shownOnce, statusLine, table, time } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';

function runner(context: ViewContext, line: ReturnType<typeof statusLine>) {
  return (question: string | undefined, call: () => Promise<unknown>) => async () => {
    if (question && !(await confirmAction(question))) return;
    try {
      await call();
      context.refresh();
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
  };
}

/** Signing keys (rotation) and admin keys (create, shown once; last use; revoke). */
export async function keysView(context: ViewContext): Promise<void> {
  const line = statusLine();
  const output = h('div', {});
  const run = runner(context, line);
  const loadKeys = async (cursor: string | undefined) => {
    const page = await api<AdminKeyList>('GET', `/admin-keys${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.adminKeys, nextCursor: page.nextCursor };
  };
  const [{ signingKeys }, firstKeys] = await Promise.all([api<AdminSigningKeyList>('GET', '/signing-keys'), loadKeys(undefined)]);
  const name = h('input', { type: 'text', name: 'name', required: true });
  replace(
    context.root,
    h('h1', {}, M.keys.heading),
    line.element,
    output,
    h('h2', {}, M.keys.signing),
    table(
      M.keys.signing,
      [M.keys.colKid, M.keys.colAlg, M.keys.colCreated, M.keys.colRetired],
      signingKeys.map((key) => [
        h('code', {}, key.kid),
        document.createTextNode(key.alg),
        document.createTextNode(time(key.createdAt)),
        document.createTextNode(key.retiredAt === null ? M.keys.current : time(key.retiredAt)),
      ]),
    ),
    canAct(context)
      ? h('button', { type: 'button', onclick: run(M.keys.confirmRotate, () => api('POST', '/signing-keys/rotate')) }, M.keys.rotate)
      : null,
    h('h2', {}, M.keys.admin),
    await pagedTable(
      M.keys.admin,
      [M.keys.colName, M.keys.colCreated, M.keys.colLastUsed, M.keys.colStatus, ''],
      async (cursor) => (cursor ? loadKeys(cursor) : firstKeys),
      (key: AdminKeyInfo) => [
        document.createTextNode(key.name),
        document.createTextNode(time(key.createdAt)),
        document.createTextNode(time(key.lastUsedAt)),
        document.createTextNode(key.revokedAt === null ? M.keys.live : `${M.keys.revoked} ${time(key.revokedAt)}`),
        canAct(context) && key.revokedAt === null
          ? h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: run(M.keys.confirmRevoke(key.name), () => api('POST', `/admin-keys/${key.id}/revoke`)),
              },
              M.keys.revoke,
            )
          : null,
      ],
      (message) => line.say(M.failed(message), true),
    ),
    canAct(context)
      ? h(
          'form',
          {
            onsubmit: async (event: Event) => {
              event.preventDefault();
              try {
                const made = await api<AdminNewKey>('POST', '/admin-keys', { name: name.value });
                replace(
                  output,
                  shownOnce(M.keys.newKey, made.key),
                  h('button', { type: 'button', onclick: () => context.refresh() }, M.close),
                );
              } catch (error) {
                line.say(M.failed((error as Error).message), true);
              }
            },
          },
          field(M.keys.keyName, name),
          h('button', { type: 'submit' }, M.keys.createKey),
        )
      : null,
  );
}

/** Operators: who may enter the console, their role; add, change, remove. */
export async function operatorsView(context: ViewContext): Promise<void> {
  const line = statusLine();
  const run = runner(context, line);
  const loadOperators = async (cursor: string | undefined) => {
    const page = await api<AdminOperatorList>('GET', `/operators${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.operators, nextCursor: page.nextCursor };
  };
  const email = h('input', { type: 'email', name: 'email', required: true });
  const role = h(
    'select',
    { name: 'role' },
    h('option', { value: 'viewer' }, M.operators.viewer),
    h('option', { value: 'admin' }, M.operators.admin),
  );
  const row = (operator: AdminOperator) => [
    document.createTextNode(operator.email),
    document.createTextNode(operator.role),
    document.createTextNode(time(operator.createdAt)),
    document.createTextNode(operator.addedBy),
    canAct(context)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: run(M.operators.confirmRemove(operator.email), () => api('DELETE', `/operators/${operator.id}`)),
          },
          M.operators.remove,
        )
      : null,
  ];
  replace(
    context.root,
    h('h1', {}, M.operators.heading),
    line.element,
    await pagedTable(
      M.operators.heading,
      [M.operators.colEmail, M.operators.colRole, M.operators.colAdded, M.operators.colBy, ''],
      loadOperators,
      row,
      (message) => line.say(M.failed(message), true),
    ),
    canAct(context)
      ? h(
          'form',
          {
            onsubmit: (event: Event) => {
              event.preventDefault();
              void run(undefined, () => api('POST', '/operators', { email: email.value, role: role.value }))();
            },
          },
          h('h2', {}, M.operators.add),
          field(M.operators.email, email),
          field(M.operators.role, role),
          h('button', { type: 'submit' }, M.operators.add),
        )
      : null,
  );
}
