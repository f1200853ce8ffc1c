/**
 * Apache httpd with mod_auth_openidc (Debian's apache2 and libapache2-mod-auth-openidc) as a
 * relying party nobody on this team wrote: a private instance per call, its own config, pid
 * file, error log and document root in a temp dir, one process (its threads) in the foreground (`-X`) on a free
 * loopback port; no system service. It protects /protected with `AuthType openid-connect` as a
 * confidential client registered at the service (`clients create`), the code posted back
 * (OIDCResponseMode form_post), and shows the signed-in user's email (REMOTE_USER, through
 * mod_include) at /protected/.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type Stack } from '../harness.ts';

export const APACHE = '/usr/sbin/apache2';
export const MOD_AUTH_OPENIDC = '/usr/lib/apache2/modules/mod_auth_openidc.so';
const MODULES = '/usr/lib/apache2/modules';

/** Why the suite cannot run here, or undefined when it can (CI installs both: .ci/browser.sh). */
export const modAuthOpenidcMissing = (): string | undefined =>
  !existsSync(APACHE)
    ? `no ${APACHE}: install Debian's apache2 (bash .ci/browser.sh does)`
    : !existsSync(MOD_AUTH_OPENIDC)
      ? `no ${MOD_AUTH_OPENIDC}: install Debian's libapache2-mod-auth-openidc (bash .ci/browser.sh does)`
      : undefined;

export interface ApacheApp {
  /** Where the protected page is: http://<host>:<port>/protected/ */
  url: string;
  origin: string;
  clientId: string;
  /** mod_auth_openidc's redirect URI: its callback, and with `?logout=…` its logout endpoints. */
  redirectUri: string;
  /** The error log so far (for a failure's message). */
  log(): string;
  close(): Promise<void>;
}

/**
 * Registers a client for an Apache app on `host` (a loopback address) and starts it. `logout`:
 * which of mod_auth_openidc's logout endpoints the client registers, `<redirect_uri>?logout=backchannel`
 * (Back-Channel Logout: it verifies the logout token and ends the sessions of its sid) or
 * `<redirect_uri>?logout=get` with frontchannel_logout_session_required (Front-Channel Logout:
 * framed by the signed-out page, it ends the session of its cookie, or else of the `iss` and `sid`).
 */
export async function startApacheApp(
  stack: Stack,
  name: string,
  options: { host: string; logout: 'backchannel' | 'frontchannel' },
): Promise<ApacheApp> {
  const port = await freePort();
  const origin = `http://${options.host}:${port}`;
  const redirectUri = `${origin}/protected/redirect_uri`;
  const logoutFlags =
    options.logout === 'backchannel'
      ? ['--backchannel-logout-uri', `${redirectUri}?logout=backchannel`]
      : ['--frontchannel-logout-uri', `${redirectUri}?logout=get`, '--frontchannel-logout-session-required', 'yes'];
  const keys = await stack.idp<{ clientId: string; secretKey: string }>(
    'clients',
    'create',
    '--name',
    name,
    '--redirect-uri',
    redirectUri,
    ...logoutFlags,
  );

  const dir = mkdtempSync(join(tmpdir(), 'service-demo-apache-'));
  const docs = join(dir, 'htdocs');
  mkdirSync(join(docs, 'protected'), { recursive: true });
  writeFileSync(join(docs, 'index.html'), `<!doctype html><html lang="en"><title>${name}</title><p>public</p>\n`);
  writeFileSync(
    join(docs, 'protected', 'index.shtml'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title></head><body><main><h1>${name}</h1>` +
      '<p>Signed in as <span id="who"><!--#echo var="REMOTE_USER" --></span></p></main></body></html>\n',
  );
  // As root, httpd serves as another user (it refuses root): the files must be readable by it.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) for (const path of [dir, docs, join(docs, 'protected')]) chmodSync(path, 0o755);
  const config = join(dir, 'httpd.conf');
  writeFileSync(
    config,
    `ServerRoot "${dir}"
DefaultRuntimeDir "${dir}"
PidFile "${dir}/httpd.pid"
ErrorLog "${dir}/error.log"
LogLevel warn auth_openidc:${process.env.DEBUG_OIDC ? 'debug' : 'warn'}
Listen ${options.host}:${port}
ServerName ${options.host}:${port}
# -X is one process: its threads serve the browser and the service's back-channel calls alike, no connection held idle.
KeepAlive Off
${asRoot ? 'User www-data\nGroup www-data\n' : ''}LoadModule mpm_event_module ${MODULES}/mod_mpm_event.so
LoadModule authn_core_module ${MODULES}/mod_authn_core.so
LoadModule authz_core_module ${MODULES}/mod_authz_core.so
LoadModule authz_user_module ${MODULES}/mod_authz_user.so
LoadModule mime_module ${MODULES}/mod_mime.so
LoadModule dir_module ${MODULES}/mod_dir.so
LoadModule include_module ${MODULES}/mod_include.so
LoadModule auth_openidc_module ${MOD_AUTH_OPENIDC}
TypesConfig /etc/mime.types
DocumentRoot "${docs}"
DirectoryIndex index.html index.shtml
<Directory "${docs}">
  Require all granted
</Directory>

OIDCProviderMetadataURL ${stack.serviceUrl}/.well-known/openid-configuration
OIDCClientID ${keys.clientId}
OIDCClientSecret ${keys.secretKey}
OIDCRedirectURI ${redirectUri}
OIDCCryptoPassphrase ${randomBytes(24).toString('hex')}
OIDCResponseMode form_post
OIDCScope "openid email"
OIDCRemoteUserClaim email
OIDCSessionType server-cache
OIDCCacheType shm
OIDCDefaultLoggedOutURL ${origin}/

<Location /protected>
  AuthType openid-connect
  Require valid-user
  Options +Includes
  AddType text/html .shtml
  AddOutputFilter INCLUDES .shtml
</Location>
`,
  );
  const process_ = spawn(APACHE, ['-X', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  process_.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  process_.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const log = () => {
    const errorLog = join(dir, 'error.log');
    return output + (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : '');
  };
  const exited = new Promise<void>((resolve) => process_.once('exit', () => resolve()));
  const close = async () => {
    if (process_.exitCode === null && process_.signalCode === null) {
      process_.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  await untilListening(origin, process_, log).catch(async (error) => {
    await close();
    throw error;
  });
  return { url: `${origin}/protected/`, origin, clientId: keys.clientId, redirectUri, log, close };
}

/** Polls the public page until httpd answers, within 10 s; fails at once if it exited. */
async function untilListening(origin: string, httpd: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (httpd.exitCode !== null) throw new Error(`apache2 exited (${httpd.exitCode}):\n${log()}`);
    try {
      if ((await fetch(`${origin}/`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`apache2 did not answer at ${origin} within 10 s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
