import type { AdminDashboard } from 'service-protocol';
import uPlot from 'uplot';
import { api } from '../api.js';
import { h, replace, table, time } from '../dom.js';
import { M } from '../messages.js';
import type { ViewContext } from './context.js';

const COLORS = ['#1a5fb4', '#c01c28', '#26a269', '#a347ba', '#e66100'];

/** Sign-ins and failures over time, new devices, code sends and refusals (uPlot), and the webhook backlog. */
export async function dashboardView(context: ViewContext): Promise<void> {
  const data = await api<AdminDashboard>('GET', '/dashboard');
  const names = [M.dashboard.signIns, M.dashboard.failures, M.dashboard.newDevices, M.dashboard.otpSends, M.dashboard.otpRefusals];
  const series = [data.series.signIns, data.series.signInFailures, data.series.newDevices, data.series.otpSends, data.series.otpRefusals];
  const chart = h('figure', { class: 'chart' }, h('figcaption', {}, M.dashboard.chartLabel));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  replace(
    context.root,
    h('h1', {}, M.dashboard.heading),
    chart,
    table(
      M.dashboard.totals,
      [...names, M.dashboard.backlog, M.dashboard.oldest],
      [
        [
          ...series.map((values) => document.createTextNode(String(sum(values)))),
          document.createTextNode(String(data.webhooks.pending)),
          document.createTextNode(time(data.webhooks.oldestPendingAt)),
        ],
      ],
    ),
  );
  const xs = series[0]?.map((_, i) => (data.since + i * data.bucketMs) / 1000) ?? [];
  // uPlot draws on a canvas and sizes its elements through the CSSOM (allowed by the CSP); its style sheet is bundled.
  const plot = new uPlot(
    {
      width: Math.min(900, Math.max(280, document.body.clientWidth - 64)),
      height: 260,
      series: [{}, ...names.map((label, i) => ({ label, stroke: COLORS[i] as string, width: 2 }))],
      axes: [{}, {}],
    },
    [xs, ...series],
    chart,
  );
  plot.root.setAttribute('role', 'img');
  plot.root.setAttribute('aria-label', M.dashboard.chartLabel);
}
