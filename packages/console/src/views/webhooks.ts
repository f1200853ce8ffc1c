import type { AdminNewWebhook, AdminWebhookDeliveryList, AdminWebhookEndpoint, AdminWebhookList } from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, PAGE_SIZE, pagedTable, replace, shownOnce, statusLine, table, text, time } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';

/** Webhook endpoints: their delivery state and last error, enable/disable, add (secret shown once), remove. */
export async function webhooksView(context: ViewContext): Promise<void> {
  const line = statusLine();
  const output = h('div', {});
  const load = async (cursor: string | undefined) => {
    const page = await api<AdminWebhookList>('GET', `/webhooks${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.webhooks, nextCursor: page.nextCursor };
  };
  const first = await load(undefined);
  const run = (question: string | undefined, call: () => Promise<unknown>) => async () => {
    if (question && !(await confirmAction(question))) return;
    try {
      await call();
      context.refresh();
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
  };
  const showDeliveries = (endpoint: AdminWebhookEndpoint) => async () => {
    try {
      const { deliveries } = await api<AdminWebhookDeliveryList>('GET', `/webhooks/${endpoint.id}/deliveries`);
      const retry = (id: string) => async () => {
        try {
          await api('POST', `/webhook-deliveries/${id}/retry`);
          line.say(M.webhooks.retried);
          await showDeliveries(endpoint)();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      };
      const rows = deliveries.map((delivery) => [
        document.createTextNode(text(delivery.eventType)),
        document.createTextNode(time(delivery.createdAt)),
        document.createTextNode(M.webhooks.state[delivery.state] ?? delivery.state),
        document.createTextNode(String(delivery.attempts)),
        h('span', { class: 'last-error' }, text(delivery.lastError)),
        document.createTextNode(time(delivery.nextAttemptAt)),
        canAct(context) && (delivery.state === 'retrying' || delivery.state === 'failed')
          ? h('button', { type: 'button', onclick: retry(delivery.id) }, M.webhooks.retry)
          : null,
      ]);
      replace(
        output,
        h('h2', {}, M.webhooks.deliveriesOf(endpoint.url)),
        deliveries.length === 0
          ? h('p', {}, M.webhooks.noDeliveries)
          : table(
              M.webhooks.deliveriesOf(endpoint.url),
              [
                M.webhooks.colEvent,
                M.webhooks.colCreated,
                M.webhooks.colState,
                M.webhooks.colAttempts,
                M.webhooks.colLastError,
                M.webhooks.colNext,
                '',
              ],
              rows,
            ),
      );
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
  };
  const actions = (endpoint: AdminWebhookEndpoint) =>
    h(
      'span',
      { class: 'actions' },
      h('button', { type: 'button', onclick: showDeliveries(endpoint) }, M.webhooks.deliveries),
      canAct(context) ? adminActions(endpoint) : null,
    );
  const adminActions = (endpoint: AdminWebhookEndpoint) =>
    canAct(context)
      ? h(
          'span',
          { class: 'actions' },
          endpoint.disabledAt === null
            ? h(
                'button',
                {
                  type: 'button',
                  onclick: run(M.webhooks.confirmDisable(endpoint.url), () => api('POST', `/webhooks/${endpoint.id}/disable`)),
                },
                M.webhooks.disable,
              )
            : h(
                'button',
                { type: 'button', onclick: run(undefined, () => api('POST', `/webhooks/${endpoint.id}/enable`)) },
                M.webhooks.enable,
              ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: run(M.webhooks.confirmDelete(endpoint.url), () => api('DELETE', `/webhooks/${endpoint.id}`)),
            },
            M.webhooks.delete,
          ),
        )
      : null;
  const row = (endpoint: AdminWebhookEndpoint) => [
    document.createTextNode(endpoint.url),
    document.createTextNode(endpoint.disabledAt === null ? M.webhooks.enabled : M.webhooks.disabledBy(text(endpoint.disabledReason))),
    document.createTextNode(String(endpoint.failureCount)),
    h('span', { class: 'last-error' }, `${text(endpoint.lastError)} ${endpoint.lastErrorAt ? time(endpoint.lastErrorAt) : ''}`),
    document.createTextNode(time(endpoint.lastDeliveredAt)),
    actions(endpoint),
  ];
  const url = h('input', { type: 'url', name: 'url', required: true });
  const events = h('input', { type: 'text', name: 'events', value: 'all' });
  const form = h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const made = await api<AdminNewWebhook>('POST', '/webhooks', {
            url: url.value,
            events: events.value
              .split(',')
              .map((type) => type.trim())
              .filter(Boolean),
          });
          replace(
            output,
            shownOnce(M.webhooks.secret, made.secret),
            h('button', { type: 'button', onclick: () => context.refresh() }, M.close),
          );
          output.scrollIntoView();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, M.webhooks.create),
    field(M.webhooks.url, url),
    field(M.webhooks.events, events),
    h('button', { type: 'submit' }, M.webhooks.create),
  );
  replace(
    context.root,
    h('h1', {}, M.webhooks.heading),
    line.element,
    output,
    first.items.length === 0
      ? h('p', {}, M.webhooks.noneYet)
      : await pagedTable(
          M.webhooks.heading,
          [M.webhooks.colUrl, M.webhooks.colState, M.webhooks.colFailures, M.webhooks.colLastError, M.webhooks.colDelivered, ''],
          async (cursor) => (cursor ? load(cursor) : first),
          row,
          (message) => line.say(M.failed(message), true),
        ),
    canAct(context) ? form : null,
  );
}
