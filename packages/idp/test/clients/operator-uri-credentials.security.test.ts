/**
 * Threat: a credential in a URI an operator registers leaks through the refusal. An operator
 * pastes `https://user:SECRET@app.example.com/cb` (or an origin with a password, or a
 * password-bearing string that is not a URI at all) as a client's redirect URI or origin; the
 * service refuses it, and the refusal's text goes to the admin API's answer, the CLI's
 * output, and the request log, where others read it. The refusal must name the problem
 * without repeating the secret (nor the whole input it came in).
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { checkRedirectUri, normalizeOrigin } from '../../src/clients/uris.js';
import { runCli, startTestService, type TestService } from '../support/helpers.js';

const SECRET = 'hunter2-S3cr3t';
/** Redirect URIs and origins that hold the secret somewhere and are refused. */
const REDIRECT_URIS = [
  `https://ops:${SECRET}@app.example.com/cb`,
  `https://${SECRET}@app.example.com/cb`,
  `https://:${SECRET}@app.example.com/cb`,
  `com.example.app://ops:${SECRET}@callback/cb`,
  `${SECRET}:pw@app.example.com/cb`,
  `ops:${SECRET}@app.example.com`,
  `https://app.example.com/cb?token=${SECRET}#frag`,
];
const ORIGINS = [
  `https://ops:${SECRET}@app.example.com`,
  `https://${SECRET}@app.example.com`,
  `https://:${SECRET}@app.example.com`,
  `${SECRET}:pw@app.example.com`,
  `https://app.example.com/?key=${SECRET}`,
  `not a url ${SECRET}`,
];

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('accepted');
};

describe('a credential in an operator-given URI never appears in the refusal', () => {
  it('checkRedirectUri and normalizeOrigin refuse without repeating the secret', () => {
    for (const uri of REDIRECT_URIS) {
      const message = refusal(() => checkRedirectUri(uri));
      assert.match(message, /redirect URI/, uri);
      assert.ok(!message.includes(SECRET), `${uri} → ${message}`);
    }
    for (const origin of ORIGINS) {
      const message = refusal(() => normalizeOrigin(origin));
      assert.match(message, /origin/, origin);
      assert.ok(!message.includes(SECRET), `${origin} → ${message}`);
    }
  });

  it('still says what is wrong and where: the scheme and host of a URI with credentials', () => {
    assert.equal(
      refusal(() => checkRedirectUri(`https://ops:${SECRET}@app.example.com/cb`)),
      'redirect URI must have no user name or password (https://app.example.com)',
    );
    assert.equal(
      refusal(() => normalizeOrigin(`https://:${SECRET}@app.example.com`)),
      'origin must have no user name or password (https://app.example.com)',
    );
  });

  describe('over the admin API and in the log', () => {
    let service: TestService;
    let key: string;
    const log: string[] = [];
    before(async () => {
      const stream = new PassThrough();
      stream.on('data', (chunk: Buffer) => log.push(chunk.toString()));
      service = await startTestService({ logStream: stream });
      key = (await service.ctx.adminKeys.create('ops', 'cli')).key;
    });
    after(() => service.close());

    it('answers 400 without the secret, and logs no line holding it', async () => {
      const bodies = [
        ...REDIRECT_URIS.map((uri) => ({ name: 'X', origins: [], redirectUris: [uri] })),
        ...ORIGINS.map((origin) => ({ name: 'X', origins: [origin] })),
      ];
      for (const body of bodies) {
        const response = await fetch(`${service.url}/admin/v1/clients`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await response.text();
        assert.equal(response.status, 400, text);
        assert.equal(JSON.parse(text).code, 'ERR_REQUEST_INVALID');
        assert.ok(!text.includes(SECRET), text);
      }
      assert.ok(log.length > 0, 'the requests were logged');
      assert.deepEqual(
        log.filter((line) => line.includes(SECRET)),
        [],
      );
    });
  });

  it('the CLI prints the refusal without the secret', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const data = mkdtempSync(join(tmpdir(), 'service-idp-cli-'));
    try {
      for (const args of [
        ['--redirect-uri', REDIRECT_URIS[0] as string],
        ['--origin', ORIGINS[0] as string],
      ]) {
        const run = await runCli(['clients', 'create', '--data', data, '--name', 'X', ...args]);
        assert.notEqual(run.code, 0);
        assert.match(run.stderr, /user name or password/);
        assert.ok(!`${run.stdout}${run.stderr}`.includes(SECRET), run.stderr);
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
