// A node:test reporter that prints every failed test again after the run, with its file and
// error: CI keeps only the tail of a long log, and the TAP stream names a failure once, in the
// middle. Used beside the default TAP reporter (package.json's test scripts).
import { inspect } from 'node:util';

export default async function* failureSummary(source) {
  const failures = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A file whose subtests failed fails too; its own line adds nothing but the count.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failures.push({ name, file, error: details?.error });
  }
  if (failures.length === 0) return;
  yield `\n# ${failures.length} failed test(s):\n`;
  for (const { name, file, error } of failures) {
    const cause = error?.cause ?? error;
    const text = inspect(cause, { depth: 4, breakLength: 120 }).split('\n').slice(0, 30);
    yield `# FAILED ${name}${file ? ` (${file})` : ''}\n${text.map((line) => `#   ${line}`).join('\n')}\n`;
  }
}
