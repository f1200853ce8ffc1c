/**
 * What an operator meets before the service runs: --version, the configuration file and its
 * precedence (flags > environment > file > defaults), `config check` with secrets hidden, and
 * a bad setting refused in one line with exit status 2 naming it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, runCli as run } from '../support/helpers.js';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** One line on stderr, naming `setting`, a pointer to --help, exit status 2, nothing on stdout. */
function refusedInOneLine(result: { code: number; stdout: string; stderr: string }, setting: RegExp) {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^service-idp: [^\n]+\. See service-idp --help\.\n$/, result.stderr);
  assert.match(result.stderr, setting);
}

describe('service-idp configuration', () => {
  let dir: string;
  let data: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'service-idp-config-'));
    data = join(dir, 'data');
    mkdirSync(data);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, settings: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof settings === 'string' ? settings : JSON.stringify(settings));
    return path;
  };
  const check = async (args: string[], env: Record<string, string> = {}) => {
    const result = await run(['config', 'check', ...args], env);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as Record<string, any>;
  };

  it('prints the package version', async () => {
    for (const args of [['--version'], ['clients', 'list', '--version']]) {
      const { code, stdout } = await run(args);
      assert.equal(code, 0);
      assert.equal(stdout, `${PACKAGE.version}\n`);
    }
  });

  it('reads a configuration file: flags over environment over file over defaults', async () => {
    const config = file('precedence.json', { SERVICE_IDP_PORT: 9001, SERVICE_IDP_HOST: '127.0.0.2', SERVICE_IDP_MFA_REMEMBER_DAYS: 7 });
    const fromFile = await check(['--config', config]);
    assert.deepEqual([fromFile.port, fromFile.host, fromFile.mfaRememberDays, fromFile.logLevel], [9001, '127.0.0.2', 7, 'info']);
    const overEnvironment = await check(['--config', config], { SERVICE_IDP_PORT: '9002' });
    assert.deepEqual([overEnvironment.port, overEnvironment.host], [9002, '127.0.0.2']);
    const overFlag = await check(['--config', config, '--port', '9003'], { SERVICE_IDP_PORT: '9002' });
    assert.equal(overFlag.port, 9003);
    // SERVICE_IDP_CONFIG names the file too; an empty variable leaves the file's setting.
    assert.equal((await check([], { SERVICE_IDP_CONFIG: config, SERVICE_IDP_PORT: '' })).port, 9001);
    // true/false stand for the 1/0 switches.
    assert.equal((await check(['--config', file('switch.json', { SERVICE_IDP_TEST_MODE: true })])).testMode, true);
  });

  it('prints the effective configuration with passwords, tokens and secrets hidden', async () => {
    const config = file('secrets.json', {
      SMTP_URL: 'smtp://mailer:smtp-password-1@mail.example.com:587',
      DATABASE_URL: 'postgres://idp:db-password-2@db.example.com:5432/idp',
      SMS_TRANSPORT: 'twilio',
      TWILIO_ACCOUNT_SID: 'AC123',
      TWILIO_AUTH_TOKEN: 'twilio-token-3',
      TWILIO_FROM: '+15550001111',
    });
    const { stdout, code } = await run(['config', 'check', '--config', config]);
    assert.equal(code, 0);
    for (const secret of ['smtp-password-1', 'db-password-2', 'twilio-token-3']) assert.ok(!stdout.includes(secret), `${secret} is hidden`);
    const shown = JSON.parse(stdout);
    assert.equal(shown.smtpUrl, 'smtp://mailer:***@mail.example.com:587');
    assert.equal(shown.databaseUrl, 'postgres://idp:***@db.example.com:5432/idp');
    assert.deepEqual(shown.sms, { transport: 'twilio', accountSid: 'AC123', authToken: '***', from: '+15550001111' });
    const webhook = await check([], {
      SMS_TRANSPORT: 'webhook',
      SMS_WEBHOOK_URL: 'https://sms.example',
      SMS_WEBHOOK_SECRET: 'sixteen-chars-or-more',
    });
    assert.equal(webhook.sms.secret, '***');
  });

  it('prints the CAPTCHA settings with its secret hidden, and refuses incomplete or leftover ones, naming the setting', async () => {
    const shown = await check([], {
      SERVICE_IDP_SEND_CHALLENGE: 'hcaptcha',
      SERVICE_IDP_CAPTCHA_SITE_KEY: '10000000-ffff-ffff-ffff-000000000001',
      SERVICE_IDP_CAPTCHA_SECRET: 'captcha-secret-4',
    });
    assert.ok(!JSON.stringify(shown).includes('captcha-secret-4'), 'the CAPTCHA secret is hidden');
    assert.deepEqual(shown.sendCaptcha, {
      kind: 'hcaptcha',
      siteKey: '10000000-ffff-ffff-ffff-000000000001',
      secret: '***',
      verifyUrl: 'https://api.hcaptcha.com/siteverify',
      scriptUrl: 'https://js.hcaptcha.com/1/api.js?render=explicit',
      timeoutMs: 3000,
    });
    assert.equal((await check([])).sendCaptcha, null, 'the proof of work by default');
    for (const [env, named] of [
      [{ SERVICE_IDP_SEND_CHALLENGE: 'recaptcha' }, /SERVICE_IDP_SEND_CHALLENGE must be pow, turnstile or hcaptcha/],
      [{ SERVICE_IDP_SEND_CHALLENGE: 'turnstile', SERVICE_IDP_CAPTCHA_SITE_KEY: 'k' }, /needs SERVICE_IDP_CAPTCHA_SECRET/],
      [{ SERVICE_IDP_CAPTCHA_SECRET: 'leftover-secret-5' }, /SERVICE_IDP_CAPTCHA_SECRET is set but SERVICE_IDP_SEND_CHALLENGE is pow/],
    ] as const) {
      const result = await run(['config', 'check'], env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, named);
      assert.ok(!result.stderr.includes('leftover-secret-5'), 'never the secret');
    }
  });

  it('refuses a configuration file that is not one, naming the file and the setting', async () => {
    refusedInOneLine(
      await run(['config', 'check', '--config', join(dir, 'missing.json')]),
      /cannot read the configuration file .*missing\.json/,
    );
    refusedInOneLine(await run(['config', 'check', '--config', file('broken.json', '{ "SERVICE_IDP_PORT": ')]), /broken\.json is not JSON/);
    refusedInOneLine(await run(['config', 'check', '--config', file('list.json', [1])]), /must hold one JSON object/);
    refusedInOneLine(
      await run(['config', 'check', '--config', file('typo.json', { SERVICE_IDP_PROT: 8080 })]),
      /unknown setting SERVICE_IDP_PROT in the configuration file/,
    );
    refusedInOneLine(
      await run(['config', 'check', '--config', file('nested.json', { SERVICE_IDP_PORT: { value: 1 } })]),
      /SERVICE_IDP_PORT in the configuration file .* must be a string, a number or true\/false/,
    );
    refusedInOneLine(
      await run(['config', 'check', '--config', file('env.json', { NODE_ENV: 'production' })]),
      /NODE_ENV cannot be set in the configuration file/,
    );
    // A value from the file is checked as the same value from the environment is.
    refusedInOneLine(
      await run(['config', 'check', '--config', file('days.json', { SERVICE_IDP_MFA_REMEMBER_DAYS: 999 })]),
      /SERVICE_IDP_MFA_REMEMBER_DAYS/,
    );
  });

  it('refuses a bad setting in one line with exit status 2, naming it (never its password)', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ SMTP_URL: 'not-a-url' }, /^service-idp: SMTP_URL is not a URL/],
      [{ SMTP_URL: 'http://user:hunter22@mail.example.com' }, /^service-idp: SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL, not http\./],
      [{ SERVICE_IDP_TRUST_PROXY: 'garbage' }, /^service-idp: SERVICE_IDP_TRUST_PROXY: "garbage" is not an address, a CIDR/],
      [{ SERVICE_IDP_TRUST_PROXY: '10.0.0.0/8,10.1.0.0/99' }, /"10\.1\.0\.0\/99" is not/],
      [{ SERVICE_IDP_MAIL_TEMPLATES: join(dir, 'no-such-folder') }, /^service-idp: SERVICE_IDP_MAIL_TEMPLATES: no folder .*no-such-folder/],
    ];
    for (const [env, message] of cases) {
      for (const command of [
        ['config', 'check'],
        ['start', '--port', '0', '--data', data],
        ['clients', 'list', '--data', data],
      ]) {
        const result = await run(command, env);
        refusedInOneLine(result, message);
        assert.ok(!result.stderr.includes('hunter22'));
      }
    }
    // What proxy-addr accepts is accepted.
    assert.equal(
      (await check([], { SERVICE_IDP_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback' })).trustProxy,
      '127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback',
    );
    assert.equal((await check([], { SERVICE_IDP_MAIL_TEMPLATES: data })).mailTemplatesDir, data);
  });

  it('names an unreachable database, its password hidden', async () => {
    const url = `postgres://idp:db-secret-9@127.0.0.1:${await freePort()}/idp`;
    for (const command of [['clients', 'list'], ['migrate'], ['start', '--port', '0']]) {
      const result = await run([...command, '--data', data], { DATABASE_URL: url });
      refusedInOneLine(
        result,
        /cannot use the database postgres:\/\/idp:\*\*\*@127\.0\.0\.1:\d+\/idp \(--database \/ DATABASE_URL\): connect ECONNREFUSED/,
      );
      assert.ok(!result.stderr.includes('db-secret-9'));
    }
  });

  it('refuses a data folder that is not there, except to start (which makes it)', async () => {
    const mistyped = join(dir, 'dta');
    for (const command of [['clients', 'list'], ['users', 'list'], ['mail'], ['migrate'], ['backup', join(dir, 'b.db')]]) {
      refusedInOneLine(
        await run([...command, '--data', mistyped]),
        new RegExp(`no data folder ${mistyped.replaceAll('/', '\\/')}: check --data`),
      );
      refusedInOneLine(await run(command, { SERVICE_IDP_DATA: mistyped }), /no data folder/);
    }
    assert.throws(() => readFileSync(join(mistyped, 'server-secret')), /ENOENT/, 'nothing was made');
  });

  it('warns when the issuer would be the unspecified address --host listens on', async () => {
    const warned = await run(['config', 'check', '--host', '0.0.0.0']);
    assert.equal(warned.code, 0);
    assert.match(
      warned.stderr,
      /^service-idp: warning: the issuer http:\/\/0\.0\.0\.0:8080 is the address to listen on \(--host 0\.0\.0\.0\), not one a browser can reach: set --issuer/,
    );
    assert.equal((await run(['config', 'check', '--host', '0.0.0.0', '--issuer', 'http://idp.example:8080'])).stderr, '');
    assert.match((await run(['config', 'check', '--host', '::'])).stderr, /warning: the issuer http:\/\/\[::\]:8080/);
    // Production refuses it outright: the issuer must be https there.
    refusedInOneLine(
      await run(['config', 'check', '--host', '0.0.0.0'], { NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.com' }),
      /https/,
    );
  });
});
