/**
 * A webhook receiver on 127.0.0.1 for the webhook tests: keeps every request it gets and
 * answers as the test says (a status, a delay, no answer at all), and verifies deliveries
 * with `standardwebhooks` as a real receiver would.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body: {type, timestamp, data}. */
  json: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** What to do with a request: a status, 'hang' (never answer), 'reset' (close its connection unanswered), after an optional delay. */
export type Answer = number | 'hang' | 'reset' | { status: number; delayMs?: number; headers?: Record<string, string> };

export async function startReceiver(answer: (delivery: ReceivedDelivery, index: number) => Answer = () => 204) {
  const received: ReceivedDelivery[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const delivery = { headers: request.headers, body, json: JSON.parse(body) };
      received.push(delivery);
      const chosen = receiver.answer(delivery, received.length - 1);
      if (chosen === 'hang') {
        hanging.add(response);
        return;
      }
      if (chosen === 'reset') {
        request.socket.destroy();
        return;
      }
      const { status, delayMs = 0, headers = {} } = typeof chosen === 'number' ? { status: chosen } : chosen;
      setTimeout(() => {
        if (!response.destroyed) response.writeHead(status, headers).end();
      }, delayMs);
    });
  });
  // Counted before any byte is parsed: a TLS hello or a refused request still shows here.
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    /** TCP connections accepted, whatever came over them. */
    connections: 0,
    received,
    answer,
    /** The event ids received with a 2xx-bound answer are not known here; tests read `received`. */
    eventIds: () => received.map((d) => d.json.data.id as string),
    /** Verifies every delivery's signature with the secret, as the receiver's code would; returns the payloads. */
    verifyAll(secret: string) {
      const webhook = new Webhook(secret);
      return received.map((d) => webhook.verify(d.body, d.headers as Record<string, string>));
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/**
 * Polls `check` until it holds or `timeoutMs` passes (then throws with `what`). 30 s: only a
 * ceiling (a passing check returns at once), high enough that two suites side by side on two
 * cores, as CI and a developer run them, never decide an outcome.
 */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
