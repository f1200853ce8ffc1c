/**
 * `npm start`: runs service-idp on its embedded default (data in ./data, port 8080), registers
 * the demo clients once, then serves the two demo applications:
 * - Acme Notes on http://localhost:3000: service-web in the page, service-oauth-client in the
 *   backend (keys in ./data/demo-client.json, delegation keys in ./data/demo-delegation.json),
 *   and its own API: registered once as urn:acme:notes (read:notes, write:notes) with a role
 *   notes-reader granting read:notes, which /api/notes asks of the access token;
 * - Acme Wiki on http://localhost:3001: no SDK, express-openid-connect sends the user to the
 *   hosted sign-in pages (a confidential client whose redirect URI is /callback and whose
 *   post-logout redirect URI is its home page; keys in ./data/demo-oidc-client.json); it is
 *   organization-aware: users create organizations in their account page (self-service is on
 *   here, with the organization roles admin and member made once) and sign in to one.
 * Key files are mode 0600. Ctrl-C stops all three. A second start reuses the data.
 *
 * Environment: SERVICE_IDP_PORT (8080), DEMO_PORT (3000), DEMO_OIDC_PORT (3001), DEMO_DATA (the
 * repository's ./data).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { postLogoutRedirectUri, type RunningOidcApp, startOidcApp } from './src/oidc-app.ts';
import { NOTES_CALLBACK_PATH, NOTES_PERMISSION, type RunningDemo, startDemo } from './src/server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'packages/idp/dist/cli.js');
const DATA = resolve(process.env.DEMO_DATA ?? join(ROOT, 'data'));
const SERVICE_PORT = Number(process.env.SERVICE_IDP_PORT ?? 8080);
const DEMO_PORT = Number(process.env.DEMO_PORT ?? 3000);
const OIDC_APP_PORT = Number(process.env.DEMO_OIDC_PORT ?? 3001);
const SERVICE_URL = `http://127.0.0.1:${SERVICE_PORT}`;
const DEMO_ORIGIN = `http://localhost:${DEMO_PORT}`;
const OIDC_APP_ORIGIN = `http://localhost:${OIDC_APP_PORT}`;
const OIDC_APP_REDIRECT_URI = `${OIDC_APP_ORIGIN}/callback`;
const OIDC_APP_POST_LOGOUT_URI = postLogoutRedirectUri(OIDC_APP_ORIGIN);
const OIDC_CLIENT_FILE = join(DATA, 'demo-oidc-client.json');
const OIDC_CLIENT_NAME = 'Acme Wiki';
const CLIENT_FILE = join(DATA, 'demo-client.json');
const DELEGATION_FILE = join(DATA, 'demo-delegation.json');
const CLIENT_NAME = 'Demo';
const DEMO_NOTES_CALLBACK = `${DEMO_ORIGIN}${NOTES_CALLBACK_PATH}`;
/** Acme Notes' own API (an identifier need not be a URL anything answers at: docs/authorization.md). */
const NOTES_API = 'urn:acme:notes';
const NOTES_ROLE = 'notes-reader';

interface ClientKeys {
  clientId: string;
  publishableKey: string;
  secretKey: string;
}
interface ClientInfo {
  id: string;
  name: string;
  origins: string[];
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
}

const run = promisify(execFile);
// The port in every command's environment: `clients delegation-keys` derives the issuer
// (SERVICE_BASE_URL) from it.
const childEnv = {
  ...process.env,
  SERVICE_IDP_PORT: String(SERVICE_PORT),
  SERVICE_IDP_HOST: '127.0.0.1',
  SERVICE_IDP_ISSUER: SERVICE_URL,
  SERVICE_IDP_LOG_LEVEL: process.env.SERVICE_IDP_LOG_LEVEL ?? 'warn',
  // The demo reads its codes on /dev/mail: served to this machine only (docs/operations.md).
  SERVICE_IDP_DEV_INBOX: '1',
  // Acme Wiki's users make their own organizations in the account center (docs/organizations.md).
  SERVICE_IDP_ORGANIZATION_SELF_SERVICE: process.env.SERVICE_IDP_ORGANIZATION_SELF_SERVICE ?? 'on',
};
const say = (line = '') => process.stdout.write(`${line}\n`);
const shown = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') || isAbsolute(rel) ? path : `./${rel}`;
};

/** Runs a service-idp command on our data folder and parses its --json output. */
async function idp<T>(...args: string[]): Promise<T> {
  const { stdout } = await run(process.execPath, [CLI, ...args, '--data', DATA, '--json'], { env: childEnv, maxBuffer: 4 << 20 });
  return JSON.parse(stdout) as T;
}

function writeSecret(path: string, value: unknown) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function readJson<T>(path: string): T | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

const portInUse = (port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });

function startService(): ChildProcess {
  // Own process group: Ctrl-C reaches only this launcher, which stops the service once, in order.
  const child = spawn(process.execPath, [CLI, 'start', '--data', DATA, '--port', String(SERVICE_PORT)], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', (line) => process.stdout.write(`  [service-idp] ${line}\n`));
  }
  return child;
}

async function waitReady(child: ChildProcess) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('service-idp stopped during start (see its output above)');
    try {
      const response = await fetch(`${SERVICE_URL}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`service-idp did not answer on ${SERVICE_URL} within 60 s`);
}

/** The demo client: the one whose keys we kept, else a new one named "Demo". */
async function demoClient(clients: ClientInfo[]): Promise<ClientKeys> {
  const kept = readJson<ClientKeys>(CLIENT_FILE);
  const known = kept && clients.find((c) => c.id === kept.clientId);
  if (kept && known) {
    if (!known.origins.includes(DEMO_ORIGIN)) {
      say(`  ! The demo client allows ${known.origins.join(', ')}, not ${DEMO_ORIGIN}: delete ${shown(CLIENT_FILE)} to register again.`);
    }
    if (!known.redirectUris.includes(DEMO_NOTES_CALLBACK)) {
      say(`  ! The demo client has no redirect URI ${DEMO_NOTES_CALLBACK} (notes tokens): delete ${shown(CLIENT_FILE)} to register again.`);
    }
    say(`  Reusing the "${known.name}" client ${known.id} (keys in ${shown(CLIENT_FILE)}).`);
    return kept;
  }
  if (clients.some((c) => c.name === CLIENT_NAME)) {
    say(
      `  A client named "${CLIENT_NAME}" exists but its keys are not in ${shown(CLIENT_FILE)} (they are shown only once): registering a new one.`,
    );
  }
  const created = await idp<ClientKeys>(
    'clients',
    'create',
    '--name',
    CLIENT_NAME,
    '--origin',
    DEMO_ORIGIN,
    '--redirect-uri',
    DEMO_NOTES_CALLBACK,
  );
  writeSecret(CLIENT_FILE, created);
  say(`  Registered the "${CLIENT_NAME}" client ${created.clientId} for ${DEMO_ORIGIN} (keys in ${shown(CLIENT_FILE)}).`);
  return created;
}

/**
 * The second app's confidential client (its /callback, and its home page after logout): the one
 * whose keys we kept, else a new one. A client registered before the app signed out at the
 * service gets its post-logout redirect URI added.
 */
async function oidcAppClient(clients: ClientInfo[]): Promise<ClientKeys> {
  const kept = readJson<ClientKeys>(OIDC_CLIENT_FILE);
  const known = kept && clients.find((c) => c.id === kept.clientId);
  if (kept && known) {
    if (!known.redirectUris.includes(OIDC_APP_REDIRECT_URI)) {
      say(
        `  ! The "${known.name}" client redirects to ${known.redirectUris.join(', ')}, not ${OIDC_APP_REDIRECT_URI}: delete ${shown(OIDC_CLIENT_FILE)} to register again.`,
      );
    }
    const postLogout = known.postLogoutRedirectUris ?? [];
    if (!postLogout.includes(OIDC_APP_POST_LOGOUT_URI)) {
      // `clients update` replaces the list: keep what an operator added.
      const uris = [...postLogout, OIDC_APP_POST_LOGOUT_URI].flatMap((uri) => ['--post-logout-redirect-uri', uri]);
      await run(process.execPath, [CLI, 'clients', 'update', known.id, ...uris, '--data', DATA], { env: childEnv });
      say(`  Added ${OIDC_APP_POST_LOGOUT_URI} to the "${known.name}" client's post-logout redirect URIs.`);
    }
    say(`  Reusing the "${known.name}" client ${known.id} (keys in ${shown(OIDC_CLIENT_FILE)}).`);
    return kept;
  }
  const created = await idp<ClientKeys>(
    'clients',
    'create',
    '--name',
    OIDC_CLIENT_NAME,
    '--redirect-uri',
    OIDC_APP_REDIRECT_URI,
    '--post-logout-redirect-uri',
    OIDC_APP_POST_LOGOUT_URI,
  );
  writeSecret(OIDC_CLIENT_FILE, created);
  say(
    `  Registered the "${OIDC_CLIENT_NAME}" client ${created.clientId} for ${OIDC_APP_REDIRECT_URI} (keys in ${shown(OIDC_CLIENT_FILE)}).`,
  );
  return created;
}

/**
 * Acme Notes' API and the role that grants its read:notes, made once (kept as they are after:
 * an operator's changes stay). Nobody holds the role until an operator gives it
 * (`service-idp users roles add EMAIL notes-reader`): users only exist once they sign in.
 */
async function notesApi(apis: { identifier: string }[], roles: { name: string }[]): Promise<string> {
  if (!apis.some((api) => api.identifier === NOTES_API)) {
    await idp('apis', 'create', '--identifier', NOTES_API, '--name', 'Acme Notes API', '--permissions', `${NOTES_PERMISSION},write:notes`);
    say(`  Registered the API ${NOTES_API} (read:notes, write:notes).`);
  }
  if (!roles.some((role) => role.name === NOTES_ROLE)) {
    await idp('roles', 'create', NOTES_ROLE, '--grant', `${NOTES_API}=${NOTES_PERMISSION}`);
    say(`  Made the role ${NOTES_ROLE} (${NOTES_API}: ${NOTES_PERMISSION}).`);
  }
  return NOTES_API;
}

/**
 * The organization roles every organization has (docs/organizations.md), made once: `admin`, which
 * manages its organization and is what a user who creates one gets (SERVICE_IDP_ORGANIZATION_CREATOR_ROLE's
 * default), and a plain `member` for the people they invite.
 */
async function organizationRoles(roles: { name: string }[]): Promise<void> {
  const wanted = [
    ['admin', '--manages-organization', 'yes'],
    ['member', '--manages-organization', 'no'],
  ].filter(([name]) => !roles.some((role) => role.name === name));
  for (const [name, ...flags] of wanted) {
    await idp('orgs', 'roles', 'create', name as string, ...flags);
    say(`  Made the organization role ${name}.`);
  }
}

/** Delegation keys for the client, made once: the SP private keys are printed only when made. */
async function delegationKeys(clientId: string): Promise<Record<string, string>> {
  const kept = readJson<Record<string, string>>(DELEGATION_FILE);
  if (kept?.OAUTH_CLIENT_ID === clientId && kept.SERVICE_BASE_URL === SERVICE_URL) return kept;
  const made = await idp<Record<string, string>>('clients', 'delegation-keys', clientId);
  writeSecret(DELEGATION_FILE, made);
  say(`  Created delegation keys for the demo backend (in ${shown(DELEGATION_FILE)}).`);
  return made;
}

async function main() {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm start does).`);
  for (const [port, what] of [
    [SERVICE_PORT, 'service-idp (set SERVICE_IDP_PORT to move it)'],
    [DEMO_PORT, 'the demo (set DEMO_PORT to move it)'],
    [OIDC_APP_PORT, 'the second demo app (set DEMO_OIDC_PORT to move it)'],
  ] as const) {
    if (await portInUse(port)) throw new Error(`port ${port} is already in use; it is needed by ${what}. Is another npm start running?`);
  }
  mkdirSync(DATA, { recursive: true, mode: 0o700 });

  say(`Starting service-idp on ${SERVICE_URL} (data in ${shown(DATA)})…`);
  const child = startService();
  let demo: RunningDemo | undefined;
  let oidcApp: RunningOidcApp | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('\nStopping…');
    await demo?.close().catch(() => undefined);
    await oidcApp?.close().catch(() => undefined);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    say('Stopped.');
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      say(`service-idp exited (${signal ?? code}); stopping the demo.`);
      void stop(1);
    }
  });

  try {
    await waitReady(child);
    // Each command is a process of its own (a second or more on a busy machine): the three
    // independent set-ups run side by side, each listing read once (issue 40: start time).
    const [{ clients }, { apis }, { roles }, { roles: orgRoles }] = await Promise.all([
      idp<{ clients: ClientInfo[] }>('clients', 'list'),
      idp<{ apis: { identifier: string }[] }>('apis', 'list'),
      idp<{ roles: { name: string }[] }>('roles', 'list'),
      idp<{ roles: { name: string }[] }>('orgs', 'roles', 'list'),
    ]);
    const [client, notesApiId, wiki] = await Promise.all([
      demoClient(clients),
      notesApi(apis, roles),
      oidcAppClient(clients),
      organizationRoles(orgRoles),
    ]);
    const delegation = await delegationKeys(client.clientId);
    [demo, oidcApp] = await Promise.all([
      startDemo({
        serviceUrl: SERVICE_URL,
        publicOrigin: DEMO_ORIGIN,
        clientId: client.clientId,
        publishableKey: client.publishableKey,
        secretKey: client.secretKey,
        delegation,
        notesApi: notesApiId,
        port: DEMO_PORT,
        // Both loopback addresses, since browsers may resolve localhost to either.
        hosts: ['127.0.0.1', '::1'],
        log: (line) => say(`  ${line}`),
      }),
      startOidcApp({
        issuerBaseURL: SERVICE_URL,
        publicOrigin: OIDC_APP_ORIGIN,
        clientId: wiki.clientId,
        clientSecret: wiki.secretKey,
        port: OIDC_APP_PORT,
        hosts: ['127.0.0.1', '::1'],
        log: (line) => say(`  ${line}`),
      }),
    ]);
  } catch (error) {
    say(`\nCould not start: ${error instanceof Error ? error.message : error}`);
    await stop(1);
    return;
  }

  say(`
  ┌──────────────────────────────────────────────────────────────────────┐
    The demo is running.

    Open the demo      ${DEMO_ORIGIN}   (Acme Notes: service-web in the page)
    Second app         ${OIDC_APP_ORIGIN}   (Acme Wiki: no SDK, signs in by redirect;
                                               organizations: make one on your account page)
    Identity service   ${SERVICE_URL}   (data in ${shown(DATA)})

    Acme Notes' API (${NOTES_API}) serves notes to holders of ${NOTES_ROLE}:
      npx service-idp users roles add you@example.com ${NOTES_ROLE}

    Sign-in codes go to the development mailbox and SMS outbox:
      npx service-idp mail      (in another terminal, from the repository root)
      npx service-idp sms
      ${SERVICE_URL}/dev/mail

    Ctrl-C stops all three.
  └──────────────────────────────────────────────────────────────────────┘
`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
