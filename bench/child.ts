/**
 * Parent side of a server child process: the servers under test never share a process (or
 * an event loop) with the load generator. Messages go over the IPC channel as
 * { id, type, ... } requests answered by { id, result | error }.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

export interface ServerChild {
  pid: number;
  /** What the child reported when it was listening. */
  ready: Record<string, string>;
  request<T>(type: string, payload?: Record<string, unknown>): Promise<T>;
  /** User + system CPU seconds the child has used so far, all its threads included. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

export function cpuSecondsOf(pid: number): number {
  // /proc/PID/stat: fields 14 and 15 are utime and stime; the command name may hold spaces, so split after ')'.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export async function startChild(script: string, args: string[], execArgv: string[] = []): Promise<ServerChild> {
  const child: ChildProcess = fork(script, args, {
    execArgv: ['--import', 'tsx', ...execArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
    child.on('message', (message: { id?: number; type?: string; result?: unknown; error?: string }) => {
      if (message.type === 'ready') resolve(message.result as Record<string, string>);
      const waiter = message.id === undefined ? undefined : pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id as number);
      if (message.error) waiter.reject(new Error(message.error));
      else waiter.resolve(message.result);
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid as number,
    ready,
    request<T>(type: string, payload: Record<string, unknown> = {}) {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, type, ...payload });
      });
    },
    cpuSeconds: () => cpuSecondsOf(child.pid as number),
    async stop() {
      // A clean exit (not a kill) so --cpu-prof can write its profile.
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const DELAY_RESOLUTION_MS = 10;

/** Child side: answers requests with the handlers given, and exits on 'stop'. */
export function serveRequests(handlers: Record<string, (message: any) => Promise<unknown>>, onStop: () => Promise<void>): void {
  // Main-thread busy share between 'eluStart' and 'eluStop' (every server child answers these).
  let eluStart = performance.eventLoopUtilization();
  let delay: IntervalHistogram | undefined;
  handlers = {
    ...handlers,
    // Event-loop delay, sampled per interval between 'delaySample' calls (bench/soak.ts).
    async delayStart() {
      delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
      delay.enable();
    },
    async delaySample() {
      // The histogram holds the intervals between timer fires: the resolution plus the delay.
      const ms = (ns: number) => Math.max(0, ns / 1e6 - DELAY_RESOLUTION_MS);
      const sample = { p99: ms(delay?.percentile(99) ?? 0), mean: ms(delay?.mean ?? 0) };
      delay?.reset();
      return sample;
    },
    async eluStart() {
      eluStart = performance.eventLoopUtilization();
    },
    async eluStop() {
      return performance.eventLoopUtilization(eluStart).utilization;
    },
  };
  process.on('message', (message: { id?: number; type: string }) => {
    if (message.type === 'stop') {
      onStop().finally(() => process.exit(0));
      return;
    }
    const handler = handlers[message.type];
    const run = handler ? handler(message) : Promise.reject(new Error(`unknown request ${message.type}`));
    run.then(
      (result) => process.send?.({ id: message.id, result }),
      (error: unknown) =>
        process.send?.({ id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
}
