/**
 * A real HTTP server on 127.0.0.1 publishing Client ID Metadata Documents (clients/metadata-document.ts):
 * each path answers as its handler says; it counts requests per path and TCP connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export async function startDocumentServer() {
  const handlers = new Map<string, Handler>();
  const requests = new Map<string, number>();
  let connections = 0;
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const handler = handlers.get(path);
    if (handler) handler(request, response);
    else response.writeHead(404).end();
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    /** The client_id of the document at `path`. */
    url: (path: string) => `${origin}${path}`,
    /** Answers `path` with `handler`. */
    on(path: string, handler: Handler) {
      handlers.set(path, handler);
    },
    /** Publishes `document` as JSON at `path`, with the Cache-Control given. */
    publish(path: string, document: unknown, cacheControl = 'max-age=300') {
      handlers.set(path, (_request, response) =>
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': cacheControl }).end(JSON.stringify(document)),
      );
    },
    requests: (path: string) => requests.get(path) ?? 0,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
