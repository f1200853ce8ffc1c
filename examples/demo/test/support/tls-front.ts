/**
 * A small TLS front for browser tests that need the service on https (DBSC registers only over
 * https; `__Host-` cookies and `SameSite=None` need `Secure`): a self-signed certificate for
 * `localhost` (openssl), an https server on `port` that forwards every request to the service's
 * plain listener, and the Chromium flag that accepts exactly that certificate's key. Node-side
 * calls of the test process (the harness, the demo backend, openid-client) reach the service
 * directly through `plainFetch`.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsFront {
  /** https://localhost:PORT: the issuer a service behind it names. */
  origin: string;
  /** Chromium's `--ignore-certificate-errors-spki-list=…` for this front's certificate. */
  chromiumArg: string;
  close(): Promise<void>;
}

/** Serves https://localhost:`port`, forwarding to http://127.0.0.1:`targetPort` (the service's listener). */
export async function startTlsFront(port: number, targetPort: () => number, log?: (line: string) => void): Promise<TlsFront> {
  const dir = mkdtempSync(join(tmpdir(), 'service-tls-front-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
      ...['-keyout', key, '-out', cert, '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'],
    ],
    { stdio: 'ignore' },
  );
  const der = execFileSync('sh', ['-c', `openssl x509 -in '${cert}' -pubkey -noout | openssl pkey -pubin -outform der`]);
  const spkiHash = createHash('sha256').update(der).digest('base64');
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    log?.(`${req.method} ${req.url?.slice(0, 60)} ${(req.headers.cookie ?? '').replace(/=[^;]+/g, '')}`);
    const forward = httpRequest(
      { host: '127.0.0.1', port: targetPort(), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `https://localhost:${port}`,
    chromiumArg: `--ignore-certificate-errors-spki-list=${spkiHash}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Makes the test process's global fetch reach `origin` (the front's https origin) at `plain`
 * (the service's own http listener): the harness, the in-process demo backend and openid-client
 * then talk to the service without trusting the test certificate. Returns the undo.
 */
export function plainFetch(origin: string, plain: string): () => void {
  const real = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(`${origin}/`) && url !== origin) return real(input, init);
    const target = plain + url.slice(origin.length);
    return real(input instanceof Request ? new Request(target, input) : target, init);
  };
  return () => {
    globalThis.fetch = real;
  };
}
