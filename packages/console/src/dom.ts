import { M } from './messages.js';

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | boolean | undefined | ((event: Event) => void)>;

/**
 * An element with attributes, listeners (`on…`) and children. Text is always set as text
 * (a Text node): nothing the API returns is ever parsed as HTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

/** `text` or a dash for a missing value. */
export const text = (value: string | number | null | undefined) =>
  value === null || value === undefined || value === '' ? M.none : String(value);

export const time = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? M.none : new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

/** A table with a caption, its header row and rows of cells. */
export function table(caption: string, headers: string[], rows: Child[][]): HTMLTableElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
  );
}

/** How many rows a console list asks for at a time (the API's `limit`). */
export const PAGE_SIZE = 25;

/**
 * A list the admin API pages by cursor: a table of the first page, and a "Next page" button
 * that appends the next one while the API gives a `nextCursor`. `load` fetches a page.
 */
export async function pagedTable<T>(
  caption: string,
  headers: string[],
  load: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
  row: (item: T) => Child[],
  onError: (message: string) => void,
): Promise<HTMLElement> {
  const first = await load(undefined);
  const list = table(caption, headers, first.items.map(row));
  const container = h('div', { class: 'paged' }, list);
  let cursor = first.nextCursor;
  const more = h('button', { type: 'button' }, M.more);
  more.addEventListener('click', async () => {
    try {
      const page = await load(cursor ?? undefined);
      list.tBodies[0]?.append(...page.items.map((item) => h('tr', {}, ...row(item).map((cell) => h('td', {}, cell)))));
      cursor = page.nextCursor;
      if (!cursor) more.remove();
    } catch (error) {
      onError((error as Error).message);
    }
  });
  if (cursor) container.append(more);
  return container;
}

/** A labelled form control. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLElement {
  const id = `f-${Math.random().toString(36).slice(2)}`;
  control.id = id;
  return h('p', { class: 'field' }, h('label', { for: id }, label), control);
}

/** A status line (role=status) for the outcome of an action: the API's message on a failure. */
export function statusLine(): { element: HTMLElement; say(message: string, failed?: boolean): void } {
  const element = h('p', { role: 'status', class: 'status' });
  return {
    element,
    say(message, failed = false) {
      element.textContent = message;
      element.classList.toggle('error', failed);
    },
  };
}

/**
 * Asks before a destructive action (a modal dialog). With `typed`, the operator must type that
 * text (the user's address) before Confirm is enabled.
 */
export function confirmAction(question: string, typed?: { label: string; expected: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const input = typed ? h('input', { type: 'text', autocomplete: 'off' }) : undefined;
    const ok = h('button', { type: 'submit', class: 'danger', disabled: Boolean(typed) }, M.confirm);
    const dialog = h(
      'dialog',
      { 'aria-label': M.confirm },
      h(
        'form',
        { method: 'dialog' },
        h('p', {}, question),
        input && typed ? field(typed.label, input) : null,
        h('p', { class: 'actions' }, h('button', { type: 'button', onclick: () => dialog.close('cancel') }, M.cancel), ok),
      ),
    );
    input?.addEventListener('input', () => {
      ok.disabled = input.value !== typed?.expected;
    });
    ok.addEventListener('click', () => dialog.close('ok'));
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'ok');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** A secret shown once (a key, a secret, recovery codes), in a read-only box to copy. */
export function shownOnce(label: string, value: string): HTMLElement {
  const output = h('output', { class: 'secret' }, value);
  return h('div', { class: 'once', role: 'alert' }, h('p', {}, h('strong', {}, label), ' ', M.shownOnce), output);
}

/** Replaces an element's children (absent ones skipped). */
export function replace(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
}
