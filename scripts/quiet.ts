/**
 * Runs a command and shows its output only when it fails: `npm start` builds first, and a
 * successful build's pages of compiler and bundler output would bury the banner that says
 * where the service and the demo apps are. A failed build's output is shown whole, with its
 * exit status. Usage: node --import tsx scripts/quiet.ts COMMAND [ARG...]
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node --import tsx scripts/quiet.ts COMMAND [ARG...]\n');
  process.exit(2);
}
process.stdout.write(`${[command, ...args].join(' ')} …\n`);
const chunks: Buffer[] = [];
const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
child.on('error', (error) => {
  process.stderr.write(`${command}: ${error.message}\n`);
  process.exit(1);
});
child.on('close', (code, signal) => {
  if (code === 0) return;
  process.stderr.write(Buffer.concat(chunks));
  process.stderr.write(`\n${[command, ...args].join(' ')} failed (${signal ?? `exit status ${code}`}); its output is above.\n`);
  process.exit(code ?? 1);
});
