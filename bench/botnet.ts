/**
 * A botnet at the code sender (issue 41): thousands of sign-in code requests for random
 * addresses from hundreds of loopback source addresses (127.66.<net>.<host>, real sources bound
 * with `localAddress`, so no proxy header is trusted), against the service with its default
 * thresholds and budgets lowered to a bounded run's scale. Reported: how many mails went out
 * (the development mailbox counts them), against the budget and the challenge thresholds, and
 * whether a normal user's sign-in in the same run still gets its code, with or without the
 * proof of work the hosted pages solve silently. Bots here never solve a challenge: one that
 * does pays the work per code, and the budget still bounds what is sent.
 * Run alone: `npm run bench:botnet`; `npm run bench` runs it last and reports it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, startService } from 'service-idp';
import { CHALLENGE_SOLUTION_HEADER, type SendChallenge } from 'service-protocol';
import { solveChallenge } from 'service-web/challenge';

const ORIGIN = 'http://botnet.bench';
/** Bounded: 40 networks (/24) × 10 hosts, each asking 8 codes: 3,200 requests. */
const NETWORKS = Number(process.env.BENCH_BOTNET_NETWORKS ?? 40);
const HOSTS = 10;
const PER_HOST = 8;
const CONCURRENCY = 64;
/** The service-wide mail budget for the run: small, so the bound shows within seconds. */
const MAIL_BUDGET_PER_MINUTE = 500;

export interface BotnetResult {
  requests: number;
  sources: number;
  answers: Record<string, number>;
  mailsSent: number;
  mailBudgetPerMinute: number;
  seconds: number;
  normalUser: { gotCode: boolean; challenged: boolean; status: number };
}

interface Answer {
  status: number;
  body: { code?: string; challenge?: unknown };
}

function post(port: number, localAddress: string, path: string, body: unknown, publishableKey: string, extra: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', origin: ORIGIN, 'x-service-key': publishableKey, ...extra },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Answer['body']) : {} });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export async function runBotnet(): Promise<BotnetResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-botnet-'));
  const config = loadConfig(
    { port: '0', host: '127.0.0.1', data: dataDir, 'test-mode': true },
    { SERVICE_IDP_MAIL_BUDGET: `${MAIL_BUDGET_PER_MINUTE}/minute`, SERVICE_IDP_APP_MAIL_BUDGET: `${MAIL_BUDGET_PER_MINUTE}/minute` },
  );
  const service = await startService(config, { logger: false });
  try {
    const keys = await service.ctx.clients.create({ name: 'Botnet target', origins: [ORIGIN] });
    const port = Number(new URL(service.url).port);
    const ask = (source: string, email: string, extra?: Record<string, string>) =>
      post(port, source, '/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, keys.publishableKey, extra);

    const jobs: Array<{ source: string; email: string }> = [];
    for (let n = 0; n < NETWORKS; n++)
      for (let h = 1; h <= HOSTS; h++)
        for (let i = 0; i < PER_HOST; i++) jobs.push({ source: `127.66.${n}.${h}`, email: `victim-${n}-${h}-${i}@example.com` });
    const answers: Record<string, number> = {};
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++] as { source: string; email: string };
          const answer = await ask(job.source, job.email);
          const key = answer.status < 400 ? `${answer.status} sent` : `${answer.status} ${answer.body.code ?? ''}`;
          answers[key] = (answers[key] ?? 0) + 1;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    // A person on their own network, in the same minute: their code still comes, at worst after the silent proof of work.
    const person = '127.99.0.1';
    let answer = await ask(person, 'ann@example.com');
    const challenged = answer.status === 428;
    if (challenged) {
      // As the hosted pages do: service-web's solver, then the same request with the solution.
      const solution = await solveChallenge(answer.body.challenge as SendChallenge);
      answer = await ask(person, 'ann@example.com', solution ? { [CHALLENGE_SOLUTION_HEADER]: solution } : {});
    }
    const gotCode = answer.status === 200 && (await service.ctx.mailbox.list(10, 'ann@example.com')).length === 1;
    const mailsSent = (await service.ctx.mailbox.list(100_000)).length - (gotCode ? 1 : 0);
    return {
      requests: jobs.length,
      sources: NETWORKS * HOSTS,
      answers,
      mailsSent,
      mailBudgetPerMinute: MAIL_BUDGET_PER_MINUTE,
      seconds,
      normalUser: { gotCode, challenged, status: answer.status },
    };
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function botnetReport(r: BotnetResult): string {
  const bounded = r.mailsSent <= r.mailBudgetPerMinute * Math.max(1, Math.ceil(r.seconds / 60));
  return `Botnet at the code sender: ${r.requests} code requests for random addresses from ${r.sources} loopback sources in ${NETWORKS} networks, ${r.seconds.toFixed(1)} s
  answers: ${Object.entries(r.answers)
    .sort()
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ')}
  mails sent: ${r.mailsSent} (budget ${r.mailBudgetPerMinute}/minute: ${bounded ? 'within' : 'OVER'}; the rest asked for a proof of work no bot solved, or met a limit)
  a normal user in the same run: ${r.normalUser.gotCode ? 'got the code' : `did NOT get the code (${r.normalUser.status})`}${r.normalUser.challenged ? ', after the silent proof of work (the service-wide threshold was passed)' : ', no challenge'}
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(botnetReport(await runBotnet()));
}
