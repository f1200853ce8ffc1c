import 'uplot/dist/uPlot.min.css';
import './console.css';
import { loadSession, signOut } from './api.js';
import { h, replace } from './dom.js';
import { M } from './messages.js';
import { apisView } from './views/apis.js';
import { appsView } from './views/apps.js';
import type { ViewContext } from './views/context.js';
import { dashboardView } from './views/dashboard.js';
import { eventsView } from './views/events.js';
import { keysView, operatorsView } from './views/keys.js';
import { organizationsView } from './views/orgs.js';
import { organizationRolesView, rolesView } from './views/roles.js';
import { usersView } from './views/users.js';
import { webhooksView } from './views/webhooks.js';

const VIEWS: Record<string, (context: ViewContext) => Promise<void>> = {
  dashboard: dashboardView,
  users: usersView,
  apps: appsView,
  apis: apisView,
  roles: rolesView,
  orgs: organizationsView,
  orgRoles: organizationRolesView,
  webhooks: webhooksView,
  events: eventsView,
  keys: keysView,
  operators: operatorsView,
};

function ended(): void {
  const main = document.querySelector('main');
  main?.replaceChildren(h('p', { role: 'alert' }, M.sessionEnded, ' ', h('a', { href: '/admin/signin' }, M.signInAgain)));
}

async function start(): Promise<void> {
  const app = document.getElementById('app') as HTMLElement;
  const session = await loadSession(ended);
  if (!session) {
    location.assign('/admin/signin');
    return;
  }
  const main = h('main', { id: 'main', tabindex: '-1' });
  const links = Object.keys(VIEWS).map((name) =>
    h('a', { href: `#/${name}`, 'data-view': name }, M.nav[name as keyof typeof VIEWS & keyof typeof M.nav]),
  );
  replace(
    app,
    h(
      'header',
      {},
      h('p', { class: 'brand' }, M.title),
      h('nav', { 'aria-label': M.nav.label }, h('ul', {}, ...links.map((link) => h('li', {}, link)))),
      h(
        'p',
        { class: 'who' },
        h('span', { 'data-role': session.operator.role }, M.signedInAs(session.operator.email, session.operator.role)),
        ' ',
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              await signOut();
              location.assign('/admin/signin');
            },
          },
          M.signOut,
        ),
      ),
    ),
    main,
  );
  let current = 0;
  const route = async () => {
    const seq = ++current;
    const [, name = 'dashboard', ...rest] = location.hash.replace(/^#/, '').split('/');
    const view = VIEWS[name] ?? dashboardView;
    for (const link of links) link.toggleAttribute('aria-current', link.dataset.view === name);
    delete main.dataset.ready;
    replace(main, h('p', {}, M.loading));
    // Each navigation draws into its own section, shown only if no later navigation started meanwhile.
    const section = h('div', {});
    const context: ViewContext = {
      root: section,
      role: session.operator.role,
      param: rest.length > 0 ? decodeURIComponent(rest.join('/')) : undefined,
      refresh: () => void route(),
    };
    try {
      await view(context);
    } catch (error) {
      replace(section, h('p', { role: 'alert' }, M.failed((error as Error).message)));
    }
    if (seq !== current) return;
    replace(main, section);
    main.dataset.ready = name;
  };
  window.addEventListener('hashchange', () => void route());
  await route();
}

void start();
