/**
 * Acme Notes' MCP server (issue 39): a Model Context Protocol server (the MCP TypeScript SDK's
 * McpServer over its Streamable HTTP transport, stateless) that AI agents reach with an access
 * token from the service. It is a protected resource as the MCP authorization specification
 * asks: its identifier is its own URL (`/mcp`), registered at the service as an API, and it
 * publishes OAuth 2.0 Protected Resource Metadata (RFC 9728) naming the service as its
 * authorization server, so an MCP client that gets its `401` finds the service, registers
 * itself there and signs its user in (docs/authorization.md, "AI agents").
 *
 * Every MCP request carries the token (Authorization: Bearer), verified by
 * service-oauth-client's verifyAccessToken against the service's key set, for this audience,
 * with the permission the tool needs; refused with the WWW-Authenticate challenge of RFC 6750
 * and RFC 9728 5.1's `resource_metadata`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { accessTokenRefusal, verifyAccessTokenRequest } from 'service-oauth-client';

/** The permission the MCP server's tool needs (the API registered for it defines it). */
export const MCP_PERMISSION = 'read:notes';
export const MCP_PATH = '/mcp';
/** RFC 9728 3.1: the metadata of the resource at `/mcp` is at this path plus the resource's path. */
export const MCP_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

export interface McpServerOptions {
  /** The service's issuer: the authorization server the metadata names and tokens come from. */
  serviceUrl: string;
  /** This server's public origin; its resource identifier is this origin plus /mcp. */
  publicOrigin: string;
  port: number;
  host?: string;
  /** The notes a signed-in agent may read. */
  notes: readonly string[];
}

export interface RunningMcpServer {
  /** The resource identifier, registered at the service as the API's identifier. */
  resource: string;
  url: string;
  close(): Promise<void>;
}

/**
 * The Bearer challenge with RFC 9728 5.1's `resource_metadata` as its first parameter; the DPoP
 * challenge that may follow (`Bearer, DPoP algs="…"`) is left as it is.
 */
export function withResourceMetadata(challenges: string, metadataUrl: string): string {
  const param = `resource_metadata="${metadataUrl}"`;
  if (!challenges.startsWith('Bearer')) return `Bearer ${param}, ${challenges}`;
  const rest = challenges.slice('Bearer'.length);
  return rest === '' || rest.startsWith(',') ? `Bearer ${param}${rest}` : `Bearer ${param},${rest}`;
}

export async function startMcpServer(options: McpServerOptions): Promise<RunningMcpServer> {
  const resource = `${options.publicOrigin}${MCP_PATH}`;
  const metadataUrl = `${options.publicOrigin}${MCP_METADATA_PATH}`;

  /** A fresh MCP server per request: the stateless transport keeps nothing between requests. */
  const mcpFor = (sub: string) => {
    const server = new McpServer({ name: 'acme-notes', version: '1.0.0' });
    server.registerTool('list_notes', { title: 'List notes', description: 'The titles of the signed-in user’s notes.' }, async () => ({
      content: [{ type: 'text', text: JSON.stringify({ sub, notes: options.notes }) }],
    }));
    return server;
  };

  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
    response.end(JSON.stringify(body));
  };

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (request.method === 'GET' && path === MCP_METADATA_PATH) {
      // RFC 9728 2: the resource, who issues its tokens, how they are presented, what they may carry.
      return json(response, 200, {
        resource,
        authorization_servers: [options.serviceUrl],
        bearer_methods_supported: ['header'],
        // The service's /authorize asks for openid in every request (an OpenID Connect sign-in);
        // MCP clients ask for the scopes listed here, so openid is listed beside the permission.
        scopes_supported: ['openid', MCP_PERMISSION],
        resource_name: 'Acme Notes (MCP)',
      });
    }
    if (path !== MCP_PATH) return json(response, 404, { error: 'not_found' });
    let sub: string;
    try {
      const { claims } = await verifyAccessTokenRequest(request, {
        issuer: options.serviceUrl,
        audience: resource,
        // The public origin the request reached (a DPoP proof's htu is checked against it).
        origin: options.publicOrigin,
        requiredScopes: [MCP_PERMISSION],
      });
      sub = claims.sub as string;
    } catch (error) {
      const refusal = accessTokenRefusal(error);
      if (!refusal) throw error;
      const headers = { ...refusal.headers };
      // RFC 9728 5.1: where a client finds this resource's metadata (and from it, the service).
      headers['www-authenticate'] = withResourceMetadata(headers['www-authenticate'] ?? 'Bearer', metadataUrl);
      return json(response, refusal.status, refusal.body, headers);
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = mcpFor(sub);
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }

  const http = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) json(response, 500, { error: 'server_error' });
      else response.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    resource,
    url: `http://${options.host ?? '127.0.0.1'}:${port}${MCP_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
