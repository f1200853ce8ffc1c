import type { AdminKeyList, AdminNewKey, AdminOperator, AdminOperatorList, AdminSigningKeyList } from 'service-protocol';
import { api } from '../api.js';
import { confirmAction, field, h, replace, shownOnce, statusLine, table, time } from '../dom.js';
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
  const [{ signingKeys }, { adminKeys }] = await Promise.all([
    api<AdminSigningKeyList>('GET', '/signing-keys'),
    api<AdminKeyList>('GET', '/admin-keys'),
  ]);
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
    table(
      M.keys.admin,
      [M.keys.colName, M.keys.colCreated, M.keys.colLastUsed, M.keys.colStatus, ''],
      adminKeys.map((key) => [
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
      ]),
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
  const { operators } = await api<AdminOperatorList>('GET', '/operators');
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
    table(
      M.operators.heading,
      [M.operators.colEmail, M.operators.colRole, M.operators.colAdded, M.operators.colBy, ''],
      operators.map(row),
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
