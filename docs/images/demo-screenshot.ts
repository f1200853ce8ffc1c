/**
 * Regenerates docs/images/demo.png, the README's screenshot: the demo as `npm start` runs it
 * (on its own ports and a scratch data folder), a new address signed in to Acme Notes with the
 * code from the development mailbox, in headless Chromium. Not part of any test suite or CI.
 *
 *   npm run build && node --import tsx docs/images/demo-screenshot.ts
 *
 * It needs the ports 8080, 3000 and 3001 free (the screenshot shows the README's URLs) and
 * Debian's chromium at /usr/bin/chromium (or CHROMIUM_PATH).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = join(ROOT, 'docs/images/demo.png');
const SERVICE = 'http://127.0.0.1:8080';
const DEMO = 'http://localhost:3000';
const EMAIL = 'ann@example.com';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: nothing within ${ms / 1000} s`);
    await sleep(250);
  }
}

const data = mkdtempSync(join(tmpdir(), 'demo-screenshot-'));
const demo = spawn(process.execPath, ['--import', 'tsx', 'examples/demo/start.ts'], {
  cwd: ROOT,
  env: { ...process.env, DEMO_DATA: data },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  await until('the demo', async () => ((await fetch(DEMO)).ok ? true : undefined));
  const page = await browser.newPage({ viewport: { width: 900, height: 760 }, deviceScaleFactor: 1 });
  await page.goto(DEMO);
  await page.waitForSelector('#email-step:not([hidden])');
  await page.fill('#email', EMAIL);
  await page.click('#email-step button[type=submit]');
  await page.waitForSelector('#otp-step:not([hidden])');
  const otp = await until('the code', async () => {
    const mails = (await (await fetch(`${SERVICE}/dev/mail`, { headers: { accept: 'application/json' } })).json()) as Array<{
      to: string;
      text: string;
    }>;
    return mails.find((m) => m.to === EMAIL)?.text.match(/\b(\d{6})\b/)?.[1];
  });
  await page.fill('#otp', otp);
  await page.click('#otp-step button[type=submit]');
  await page.waitForSelector('#method-step:not([hidden])');
  await page.check('#method-step input[value=none]');
  await page.click('#method-step button[type=submit]');
  await page.waitForURL(`${DEMO}/account`);
  await page.waitForSelector('#account[data-state="ready"]');
  await page.waitForSelector('#devices[data-state="SUCCESS"] li[data-current="true"]');
  await page.screenshot({ path: OUT });
  console.log(`${OUT}: ${Math.round(statSync(OUT).size / 1024)} KB`);
} finally {
  await browser.close();
  demo.kill('SIGINT');
  await new Promise((r) => demo.once('exit', r));
  rmSync(data, { recursive: true, force: true });
}
