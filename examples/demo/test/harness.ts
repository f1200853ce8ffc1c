/**
 * Real-browser test harness: the built service-idp CLI on a free loopback port (its own data
 * folder, no test mode: codes are read from the development mailbox and SMS outbox on the
 * running service's /dev/mail and /dev/sms, as the demo's own `npm start` does), the demo
 * backend, small static page servers, a stalled server, and Debian's chromium through
 * playwright-core.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { type RunningDemo, startDemo } from '../src/server.ts';
import { plainFetch, startTlsFront } from './support/tls-front.ts';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = join(ROOT, 'packages/idp/dist/cli.js');
export const SCREENSHOTS = join(ROOT, 'test-results/browser');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The test service's resend spacing (SERVICE_IDP_SEND_SPACING_SECONDS): the scenarios that need a
 * second code for one address wait it out, so it is short here; the default (30 s,
 * SEND_SPACING_PER_PURPOSE) and its enforcement are tested in packages/idp/test/mail/mail-bombing.security.test.ts.
 */
export const SEND_SPACING_SECONDS = 3;
/** What a scenario waits after a send before the next one to the same address: the spacing and a second of margin. */
export const SEND_WINDOW_MS = (SEND_SPACING_SECONDS + 1) * 1000;

/**
 * How many messages /dev/mail and /dev/sms list (mail/routes.ts DEV_LIST_LIMIT). A full list may
 * have left older ones out: then the harness asks `service-idp mail|sms --json --limit 200`.
 */
const DEV_INBOX_LIST = 50;

export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ClientKeys {
  clientId: string;
  publishableKey: string;
  secretKey: string;
}

interface Mail {
  to: string;
  subject: string;
  text: string;
  createdAt: number;
}
interface Sms {
  to: string;
  body: string;
  createdAt: number;
}

/** A tiny static server; pages can be added while it runs. */
export interface PageServer {
  origin: string;
  pages: Map<string, string>;
  close(): Promise<void>;
}

export async function servePages(port?: number): Promise<PageServer> {
  const pages = new Map<string, string>();
  const server = createHttpServer((request, response) => {
    const page = pages.get(new URL(request.url ?? '/', 'http://x').pathname);
    response.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(port ?? 0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${address.port}`,
    pages,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Accepts connections and never answers a byte. */
export async function stalledServer(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createNetServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Stack {
  serviceUrl: string;
  /** Where the operator console is: its own listener with `consoleListener`, else the service. */
  consoleUrl: string;
  demoUrl: string;
  client: ClientKeys;
  /** A page server on an origin the client registered (besides the demo's). */
  registered: PageServer;
  /** A page server on an origin nobody registered. */
  foreign: PageServer;
  browser: Browser;
  /** Runs `service-idp <args> --data <dir> --json`. */
  idp<T>(...args: string[]): Promise<T>;
  /** Runs `service-idp <args> --data <dir>` and returns its output. */
  cli(...args: string[]): Promise<string>;
  /** Messages to `to`, newest first. */
  mails(to: string): Promise<Mail[]>;
  /** The 6-digit code of the first mail to `to` beyond the `seen` ones; waits up to 15 s. */
  nextMailOtp(to: string, seen: number): Promise<string>;
  /** The same for the SMS outbox. */
  nextSmsOtp(to: string, seen: number): Promise<string>;
  smses(to: string): Promise<Sms[]>;
  close(): Promise<void>;
}

const otpOf = (text: string) => text.match(/\b(\d{6})\b/)?.[1];

/**
 * `serviceHost`: the host name of the service's URL and issuer (default 127.0.0.1). The hosted
 * pages' passkeys need a domain (a relying party id is never an IP address): `localhost`.
 * `https`: the issuer is https://localhost behind a TLS front (support/tls-front.ts), so the
 * service sets its `__Host-` cookies and Chromium applies the prefix's rules to them.
 */
export async function startStack(
  options: { serviceHost?: string; consoleListener?: boolean; https?: boolean; env?: Record<string, string> } = {},
): Promise<Stack> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: install Debian's chromium (bash .ci/browser.sh does) or set CHROMIUM_PATH.`);
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm run test:browser does).`);
  const dataDir = mkdtempSync(join(tmpdir(), 'service-demo-browser-'));
  const servicePort = await freePort();
  const demoPort = await freePort();
  const frontPort = options.https ? await freePort() : undefined;
  const serviceUrl = frontPort ? `https://localhost:${frontPort}` : `http://${options.serviceHost ?? '127.0.0.1'}:${servicePort}`;
  const consolePort = options.consoleListener ? await freePort() : undefined;
  const consoleUrl = consolePort ? `http://127.0.0.1:${consolePort}` : serviceUrl;
  const demoOrigin = `http://127.0.0.1:${demoPort}`;
  // SERVICE_IDP_PORT for every command: `clients delegation-keys` prints the issuer it derives from it.
  const env = {
    ...process.env,
    SERVICE_IDP_PORT: String(servicePort),
    SERVICE_IDP_HOST: '127.0.0.1',
    SERVICE_IDP_ISSUER: serviceUrl,
    SERVICE_IDP_LOG_LEVEL: 'warn',
    SERVICE_IDP_SEND_SPACING_SECONDS: String(SEND_SPACING_SECONDS),
    // /dev/mail and /dev/sms, for this machine only: the scenarios read their codes there.
    SERVICE_IDP_DEV_INBOX: '1',
    SERVICE_IDP_TEST_MODE: '',
    NODE_ENV: 'development',
    // The operator console on a listener of its own (--console-port), when asked for.
    ...(consolePort ? { SERVICE_IDP_CONSOLE_PORT: String(consolePort) } : {}),
    // Every scenario's browser is the one loopback address: the send challenge's per-address
    // threshold is out of the way, but where a scenario sets it (hosted-send-challenge.test.ts).
    SERVICE_IDP_CHALLENGE_PER_IP: '100000/hour',
    SERVICE_IDP_CHALLENGE_PER_SUBNET: '100000/hour',
    ...options.env,
  };
  const cleanups: Array<() => Promise<unknown> | unknown> = [() => rmSync(dataDir, { recursive: true, force: true })];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  };

  try {
    let chromiumArgs: string[] = [];
    if (frontPort) {
      const front = await startTlsFront(frontPort, () => servicePort);
      cleanups.push(() => front.close());
      cleanups.push(plainFetch(serviceUrl, `http://127.0.0.1:${servicePort}`));
      chromiumArgs = [front.chromiumArg];
    }
    let output = '';
    const child: ChildProcess = spawn(process.execPath, [CLI, 'start', '--data', dataDir, '--port', String(servicePort)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => {
      output += d;
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    cleanups.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`service-idp exited: ${output}`);
      const ok = await fetch(`${serviceUrl}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`service-idp did not start within 30 s: ${output}`);
      await sleep(100);
    }

    const idp = async <T>(...args: string[]): Promise<T> => {
      const { stdout } = await run(process.execPath, [CLI, ...args, '--data', dataDir, '--json'], {
        env,
        maxBuffer: 8 << 20,
        timeout: 20_000,
      });
      return JSON.parse(stdout) as T;
    };

    const cli = async (...args: string[]) =>
      (await run(process.execPath, [CLI, ...args, '--data', dataDir], { env, timeout: 20_000 })).stdout;

    const registered = await servePages();
    cleanups.push(() => registered.close());
    const foreign = await servePages();
    cleanups.push(() => foreign.close());

    const client = await idp<ClientKeys>('clients', 'create', '--name', 'Demo', '--origin', demoOrigin, '--origin', registered.origin);
    const delegation = await idp<Record<string, string>>('clients', 'delegation-keys', client.clientId);

    const demo: RunningDemo = await startDemo({
      serviceUrl,
      publicOrigin: demoOrigin,
      clientId: client.clientId,
      publishableKey: client.publishableKey,
      secretKey: client.secretKey,
      delegation,
      port: demoPort,
      log: () => undefined,
    });
    cleanups.push(() => demo.close());

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      timeout: 30_000,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        ...chromiumArgs,
      ],
    });
    cleanups.push(() => browser.close());

    // One HTTP request to the running service, where a CLI run is a new process opening the
    // database (about 200 ms of CPU; the waits below ask every 200 ms).
    const inbox = async <T>(path: string, command: string): Promise<T[]> => {
      const response = await fetch(`${serviceUrl}${path}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
      const list = (await response.json()) as T[];
      return list.length < DEV_INBOX_LIST ? list : idp<T[]>(command, '--limit', '200');
    };
    const mails = async (to: string) => (await inbox<Mail>('/dev/mail', 'mail')).filter((m) => m.to === to);
    const smses = async (to: string) => (await inbox<Sms>('/dev/sms', 'sms')).filter((m) => m.to === to);
    const waitFor = async (what: string, read: () => Promise<string | undefined>) => {
      const until = Date.now() + 15_000;
      for (;;) {
        const value = await read();
        if (value) return value;
        if (Date.now() > until) throw new Error(`no ${what} within 15 s`);
        await sleep(200);
      }
    };

    mkdirSync(SCREENSHOTS, { recursive: true });
    return {
      serviceUrl,
      consoleUrl,
      demoUrl: demoOrigin,
      client,
      registered,
      foreign,
      browser,
      idp,
      cli,
      mails,
      smses,
      nextMailOtp: (to, seen) =>
        waitFor(`mail to ${to}`, async () => {
          const list = await mails(to);
          return list.length > seen ? otpOf(list[0]?.text ?? '') : undefined;
        }),
      nextSmsOtp: (to, seen) =>
        waitFor(`SMS to ${to}`, async () => {
          const list = await smses(to);
          return list.length > seen ? otpOf(list[0]?.body ?? '') : undefined;
        }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Saves a full-page screenshot under test-results/browser/ and prints its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
  return path;
}

/** A plain HTML page that loads the script-tag build and runs `body` (an async function body) with `ServiceWeb` in scope. */
export function plainPage(serviceUrl: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:16px system-ui,sans-serif;margin:40px;max-width:720px}pre{background:#f3f4f6;padding:16px;border-radius:8px;white-space:pre-wrap}</style>
</head><body>
<h1>${title}</h1>
<p>Page origin: <code id="origin"></code></p>
<pre id="out">running…</pre>
<script src="${serviceUrl}/sdk/v1/service-web.js"></script>
<script>
document.getElementById('origin').textContent = location.origin;
(async () => {
  const ServiceWeb = window.ServiceWeb;
  try {
    window.__result = await (async () => { ${body} })();
  } catch (error) {
    window.__result = { thrown: String(error) };
  }
  document.getElementById('out').textContent = JSON.stringify(window.__result, null, 2);
})();
</script>
</body></html>`;
}
