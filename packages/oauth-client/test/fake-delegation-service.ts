/**
 * Unit-test fake of the service's delegation endpoint: `POST /v1/delegation` on 127.0.0.1
 * (random port), opening requests and sealing responses with the fixed test keys through the
 * library's own envelope. Not the real service.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type DelegationRequestClaims,
  type DelegationResponseClaims,
  type DelegationResults,
  openEnvelope,
  responseClaims,
  sealEnvelope,
} from '../src/delegation/index.js';
import { FIXED } from './delegation-fixtures.js';

export interface Received {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingHttpHeaders;
  claims: DelegationRequestClaims;
}

export interface Reply {
  status?: number;
  contentType?: string;
  body: string;
}

export interface FakeDelegationService {
  /** Base URL, e.g. http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  requests: Received[];
  /** Override the answer; the default seals a canned result. */
  reply: ((request: DelegationRequestClaims, fake: FakeDelegationService) => Promise<Reply>) | undefined;
  close(): Promise<void>;
}

export const CANNED: { [K in keyof DelegationResults]: (req: DelegationRequestClaims<K>) => DelegationResults[K] } = {
  initiate_mfa_change: (req) =>
    req.body.mfaMethod === 'totp'
      ? {
          session_id: 'mcs_totp_1',
          status: 'totp_pending',
          otpauth_uri: 'otpauth://totp/Service:ann%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Service',
          secret: 'JBSWY3DPEHPK3PXP',
        }
      : { session_id: 'mcs_1', status: 'otp_sent', message: `code sent by ${req.body.mfaMethod}` },
  verify_mfa_change: (req) => (req.body.otp === '123456' ? { status: 'success', message: 'MFA method changed' } : { status: 'failed' }),
  get_user_credentials: () => ({ mfa_method: 'sms', status: 'ok' }),
};

/** Seals a response the way the service does, with every part overridable for attacks. */
export async function sealResponse(
  request: DelegationRequestClaims,
  overrides: Partial<Record<keyof DelegationResponseClaims, unknown>> = {},
  keys: { signingKey?: typeof FIXED.idpEd25519.privateKey; encryptionKey?: typeof FIXED.spX25519.publicKey } = {},
): Promise<string> {
  const result = (CANNED[request.op] as (r: DelegationRequestClaims) => unknown)(request);
  const claims = { ...responseClaims(request, { result: result as never, ttlSeconds: 60 }), ...overrides } as DelegationResponseClaims;
  return sealEnvelope({
    claims,
    signingKey: keys.signingKey ?? FIXED.idpEd25519.privateKey,
    encryptionKey: keys.encryptionKey ?? FIXED.spX25519.publicKey,
  });
}

export async function startFakeDelegationService(): Promise<FakeDelegationService> {
  const fake: FakeDelegationService = { url: '', requests: [], reply: undefined, close: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      if (req.method !== 'POST' || req.url !== '/v1/delegation') throw Object.assign(new Error('not found'), { status: 404 });
      const claims = (await openEnvelope(Buffer.concat(chunks).toString('utf8'), {
        decryptionKey: FIXED.idpX25519.privateKey,
        verifyKey: FIXED.spEd25519.publicKey,
        audience: fake.url,
      })) as DelegationRequestClaims;
      fake.requests.push({ method: req.method, path: req.url, headers: req.headers, claims });
      const reply = fake.reply ? await fake.reply(claims, fake) : { body: await sealResponse(claims) };
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/jose' });
      res.end(reply.body);
    } catch (err) {
      const e = err as { status?: number; code?: string; message: string };
      res.writeHead(e.status ?? 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: e.code ?? 'ERR_UNKNOWN', message: e.message }));
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return fake;
}
