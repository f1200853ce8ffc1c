/**
 * An AI agent signs its user in and calls a tool (issue 39): the MCP TypeScript SDK's own client
 * connects to Acme Notes' MCP server (examples/demo/src/mcp-server.ts), gets its 401, follows
 * the RFC 9728 metadata to the service, reads the service's metadata, registers itself (RFC 7591,
 * the operator's `open` policy: a public client on a loopback redirect), and sends its user to the
 * authorization URL. Chromium plays the user: the hosted sign-in, then the consent page (a
 * registered client is third-party), then back to the agent's loopback redirect on a port of its
 * own. The agent redeems the code (PKCE, `resource` = the MCP server) and calls `list_notes`,
 * which the server answers only for a token whose audience is itself and which carries read:notes.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_PERMISSION, type RunningMcpServer, startMcpServer } from '../src/mcp-server.ts';
import { emailAndCode, watchedPage } from './fixtures.ts';
import { freePort, type Stack, startStack } from './harness.ts';
import { assertAccessible } from './visual.ts';

const NOTES = ['Quarterly plan', 'Groceries'];

/** The agent's side of OAuth, in memory: what the SDK asks a host application to keep. */
class AgentAuth implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(private readonly redirect: string) {}
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Notes agent',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('an MCP client signs its user in at the service and calls a tool', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let mcp: RunningMcpServer;
  let callback: Server;
  let callbackUrl: string;
  let received: (query: URLSearchParams) => void = () => undefined;
  const violations: string[] = [];
  const email = `agent.user.${Date.now().toString(36)}@example.com`;

  before(async () => {
    stack = await startStack({ env: { SERVICE_IDP_CLIENT_REGISTRATION: 'open' } });
    const port = await freePort();
    mcp = await startMcpServer({ serviceUrl: stack.serviceUrl, publicOrigin: `http://127.0.0.1:${port}`, port, notes: NOTES });
    await stack.idp('apis', 'create', '--identifier', mcp.resource, '--name', 'Acme Notes (MCP)', '--permissions', MCP_PERMISSION);
    await stack.idp('roles', 'create', 'mcp-reader', '--grant', `${mcp.resource}=${MCP_PERMISSION}`);
    // The agent's loopback redirect, on a port of its own (RFC 8252 7.3).
    callback = createServer((request, response) => {
      received(new URL(request.url ?? '/', 'http://127.0.0.1').searchParams);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as { port: number }).port}/callback`;
  });
  after(async () => {
    callback?.closeAllConnections();
    callback?.close();
    await mcp?.close();
    await stack?.close();
  });

  it('discovers the service from the 401, registers, signs the user in through Chromium and calls list_notes', async () => {
    const auth = new AgentAuth(callbackUrl);
    const first = new Client({ name: 'notes-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: auth });
    await assert.rejects(first.connect(transport), UnauthorizedError);

    // The SDK registered itself at the service and built the authorization request.
    const clientId = auth.information?.client_id;
    assert.ok(clientId, 'the agent registered (RFC 7591)');
    const authorizationUrl = auth.authorizationUrl as URL;
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${stack.serviceUrl}/authorize`);
    assert.equal(authorizationUrl.searchParams.get('resource'), mcp.resource);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

    const code = new Promise<URLSearchParams>((resolve) => {
      received = resolve;
    });
    const page = await watchedPage(stack.browser, violations);
    await page.goto(authorizationUrl.href);
    await emailAndCode(stack, page, email);
    // A registered client is third-party: the user sees what it asks and allows it.
    await page.waitForURL(`${stack.serviceUrl}/signin/consent?request=**`);
    await page.getByRole('heading', { name: 'Notes agent asks for access' }).waitFor();
    assert.match((await page.textContent('main')) ?? '', /read:notes/);
    await assertAccessible(page, 'the consent page of a registered agent');
    // The user exists since the sign-in: the role that grants read:notes, before the code is issued.
    await stack.cli('users', 'roles', 'add', email, 'mcp-reader');
    await page.getByRole('button', { name: 'Allow' }).click();
    const query = await code;
    assert.ok(query.get('code'), `back at the agent with a code: ${query}`);
    await page.context().close();

    await transport.finishAuth(query.get('code') as string);
    const second = new Client({ name: 'notes-agent', version: '1.0.0' });
    await second.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: auth }));
    const result = await second.callTool({ name: 'list_notes', arguments: {} });
    const [content] = result.content as Array<{ type: string; text: string }>;
    const answer = JSON.parse(content?.text ?? '{}') as { sub?: string; notes?: string[] };
    assert.deepEqual(answer.notes, NOTES);
    assert.match(answer.sub ?? '', /^usr_/);
    await second.close();
    assert.deepEqual(violations, []);
  });

  it('refuses a call without a token with 401 and the resource metadata URL (RFC 9728 5.1)', async () => {
    const response = await fetch(mcp.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 401);
    assert.match(
      response.headers.get('www-authenticate') ?? '',
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const metadata = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', mcp.url))).json();
    assert.deepEqual(metadata.authorization_servers, [stack.serviceUrl]);
    assert.equal(metadata.resource, mcp.resource);
  });
});
