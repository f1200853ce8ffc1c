/**
 * A relying party's back-channel logout endpoint on 127.0.0.1 for the logout tests: keeps each
 * POSTed `logout_token`, answers as the test says, and verifies a token with jose against the
 * service's JWKS as an RP does (OIDC Back-Channel Logout 1.0 2.6).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';

export type LogoutAnswer = number | 'hang';

export async function startLogoutReceiver(answer: (index: number) => LogoutAnswer = () => 200) {
  const tokens: string[] = [];
  const contentTypes: string[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.push(request.headers['content-type'] ?? '');
      tokens.push(new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('logout_token') ?? '');
      const chosen = receiver.answer(tokens.length - 1);
      if (chosen === 'hang') hanging.add(response);
      else response.writeHead(chosen).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver = {
    url: `http://127.0.0.1:${port}/backchannel-logout`,
    tokens,
    contentTypes,
    answer,
    /** The claims of every token received, each verified against `jwksUrl` for `issuer` and `audience`, at `now` (the test's clock). */
    async verified(jwksUrl: string, issuer: string, audience: string, now: number) {
      const jwks = createRemoteJWKSet(new URL(jwksUrl));
      return Promise.all(
        tokens.map(async (token) => {
          const { payload, protectedHeader } = await jwtVerify(token, jwks, {
            issuer,
            audience,
            typ: 'logout+jwt',
            maxTokenAge: '5m',
            currentDate: new Date(now),
          });
          return { payload, header: protectedHeader ?? decodeProtectedHeader(token) };
        }),
      );
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
