#!/usr/bin/env node
/**
 * service-idp: run the identity service and manage its data. Every command reads the same
 * --data and --database flags and environment as `start`, and works while the service runs.
 * The commands are in cli/, one file per group, listed in cli/registry.ts; cli/run.ts runs a
 * command line. This file is the process's part: its arguments, streams, environment, signals
 * and exit status.
 */
import { runCli } from './cli/run.js';

runCli(process.argv.slice(2), {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  env: process.env,
  isTTY: Boolean(process.stdout.isTTY),
  onStopSignal(stop) {
    const stopThenExit = async (signal: NodeJS.Signals) => {
      await stop(signal);
      process.exit(0);
    };
    process.once('SIGINT', stopThenExit);
    process.once('SIGTERM', stopThenExit);
  },
}).then((code) => {
  if (code >= 0) process.exitCode = code;
});
