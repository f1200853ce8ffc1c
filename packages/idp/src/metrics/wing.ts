import { defineWing } from '../composition/wing.js';
import type { EventLog } from '../events/service.js';
import { createServiceMetrics, type FactorLabel, type PoolUse, type WebhookBacklog } from './service.js';

/** Per-process counters and scrape-time gauges (docs/operations.md, "Metrics"); the app adds the HTTP ones (http/metrics.ts). */
export const metricsWing = defineWing(
  'metrics',
  ({
    now,
    metricLabels,
    events,
    webhookOutbox,
    poolUse,
  }: {
    now: () => number;
    /** The factors' labels (factors/index.ts metricLabelsOf): sign-ins are counted by them. */
    metricLabels: readonly FactorLabel[];
    events: EventLog;
    webhookOutbox: { backlog(): Promise<WebhookBacklog> };
    poolUse: () => PoolUse | undefined;
  }) => {
    const metrics = createServiceMetrics({ now, factors: metricLabels, webhookBacklog: () => webhookOutbox.backlog(), poolUse });
    events.onRecorded(metrics.eventRecorded);
    return { services: { metrics }, close: () => metrics.close() };
  },
);
