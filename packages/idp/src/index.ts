// Its public types use node:crypto and node:http types: pull in @types/node (a dependency) for consumers.
/// <reference types="node" preserve="true" />
/**
 * service-idp as a library: open the service in-process (tests, embedding) or use the CLI.
 *
 * @example
 * ```ts
 * const service = await startService(loadConfig({ port: '0', data: './data' }));
 * console.log(service.url);
 * await service.close();
 * ```
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Paths } from 'service-protocol';
import { type AppOptions, buildApp, buildConsoleApp } from './app.js';
import { ISSUER_FILE, type ServiceConfig } from './config.js';
import { type ContextOptions, openContext, type ServiceContext } from './context.js';
import { listenMetrics, metricsPageOf } from './http/metrics.js';

export { buildApp } from './app.js';
export type { ConfigFlags, ServiceConfig } from './config.js';
export { ENVIRONMENT, ISSUER_FILE, loadConfig } from './config.js';
export type { ContextOptions, ServiceContext } from './context.js';
export { openContext } from './context.js';
export * as defaults from './defaults.js';
export { ConfigError } from './errors.js';

export interface RunningService {
  url: string;
  /** The development mailbox page, when --dev-inbox serves it. */
  devInboxUrl: string | undefined;
  /** The separate /metrics listener, when one is configured. */
  metricsUrl: string | undefined;
  /** The operator console's own listener's public URL (the console at its /admin), when one is configured. */
  consoleUrl: string | undefined;
  ctx: ServiceContext;
  close(): Promise<void>;
}

/**
 * Opens storage, ensures a signing key, and listens. When the configured port is 0 the
 * issuer is rewritten to the port actually bound, so tokens name a reachable URL.
 */
export async function startService(requested: ServiceConfig, options: ContextOptions & AppOptions = {}): Promise<RunningService> {
  let config = requested;
  if (config.port === 0) {
    const port = await freePort(config.host);
    config = { ...config, port, issuer: config.issuer.replace(/:0$/, `:${port}`) };
  }
  if (config.console?.port === 0) {
    const port = await freePort(config.console.host);
    config = { ...config, console: { ...config.console, port, url: config.console.url.replace(/:0$/, `:${port}`) } };
  }
  const ctx = await openContext(config, options);
  const app = await buildApp(ctx, options);
  let metrics: Awaited<ReturnType<typeof listenMetrics>> | undefined;
  let consoleApp: Awaited<ReturnType<typeof buildConsoleApp>> | undefined;
  try {
    await ctx.keyring.ensure();
    await app.listen({ port: config.port, host: config.host });
    if (config.metrics) metrics = await listenMetrics(metricsPageOf(app), config.metrics.host, config.metrics.port);
    if (config.console) {
      consoleApp = await buildConsoleApp(ctx, options);
      await consoleApp.listen({ port: config.console.port, host: config.console.host });
    }
  } catch (error) {
    await consoleApp?.close();
    await metrics?.close();
    await app.close();
    await ctx.close();
    throw error;
  }
  // What `clients delegation-keys` prints as SERVICE_BASE_URL when not told otherwise.
  writeFileSync(join(config.dataDir, ISSUER_FILE), `${config.issuer}\n`);
  const stopSweeper = ctx.startSweeper((error) => app.log.error({ err: error }, 'sweeping expired rows failed'));
  const webhookDelivery = ctx.startWebhookDelivery((error) => app.log.error({ err: error }, 'webhook delivery failed'));
  return {
    url: config.issuer,
    devInboxUrl: app.hasRoute({ method: 'GET', url: Paths.devMail }) ? `${config.issuer}${Paths.devMail}` : undefined,
    metricsUrl: metrics?.url,
    consoleUrl: config.console?.url,
    ctx,
    async close() {
      stopSweeper();
      await webhookDelivery.stop();
      await metrics?.close();
      await consoleApp?.close();
      await app.close();
      await ctx.close();
    },
  };
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
