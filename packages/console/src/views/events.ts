import type { AdminEvent, AdminEventPage } from 'service-protocol';
import { api, query } from '../api.js';
import { field, h, replace, statusLine, table, text, time } from '../dom.js';
import { M } from '../messages.js';
import type { ViewContext } from './context.js';

/** Events as a table: each links to its user and application. */
export function eventTable(events: AdminEvent[]): HTMLElement {
  if (events.length === 0) return h('p', {}, M.events.noneFound);
  return table(
    M.events.heading,
    [M.events.colAt, M.events.colType, M.events.colUser, M.events.colApp, M.events.colActor, M.events.colAgent, M.events.colDetail],
    events.map((event) => [
      document.createTextNode(time(event.at)),
      h('code', {}, event.type),
      event.userId ? h('a', { href: `#/users/${encodeURIComponent(event.userId)}` }, event.userId) : document.createTextNode(M.none),
      event.clientId ? h('a', { href: `#/apps/${encodeURIComponent(event.clientId)}` }, event.clientId) : document.createTextNode(M.none),
      document.createTextNode(text(event.actor)),
      document.createTextNode(text(event.userAgent)),
      document.createTextNode(event.detail ? JSON.stringify(event.detail) : M.none),
    ]),
  );
}

/** The audit trail, newest first, with filters and cursor pages. */
export async function eventsView(context: ViewContext): Promise<void> {
  const type = h('input', { type: 'text', name: 'type', autocomplete: 'off' });
  const user = h('input', { type: 'text', name: 'user', autocomplete: 'off' });
  const since = h('input', { type: 'date', name: 'since' });
  const results = h('div', {});
  const line = statusLine();
  const shown: AdminEvent[] = [];
  let cursor: string | null = null;
  const load = async (fresh: boolean) => {
    if (fresh) {
      shown.length = 0;
      cursor = null;
    }
    try {
      const page = await api<AdminEventPage>(
        'GET',
        `/events${query({
          type: type.value.trim(),
          user: user.value.trim(),
          since: since.value ? Date.parse(since.value) : undefined,
          cursor: cursor ?? undefined,
          limit: 50,
        })}`,
      );
      shown.push(...page.events);
      cursor = page.nextCursor;
      line.say('');
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
    replace(results, eventTable(shown), cursor ? h('button', { type: 'button', onclick: () => load(false) }, M.more) : null);
  };
  replace(
    context.root,
    h('h1', {}, M.events.heading),
    h(
      'form',
      {
        role: 'search',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void load(true);
        },
      },
      field(M.events.type, type),
      field(M.events.user, user),
      field(M.events.since, since),
      h('button', { type: 'submit' }, M.events.filter),
    ),
    line.element,
    results,
  );
  await load(true);
}
