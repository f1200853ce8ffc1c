/**
 * Each route's schemas are compiled at its first use (http/lazy-schemas.ts), not all at start.
 * What that must not change: every schema of every route still compiles (else a broken schema
 * would surface at a user's request, not in CI), a request is still refused by its schema with
 * the same error, and an answer is still written by its response schema (fields it does not
 * declare dropped).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { buildApp } from '../../src/app.js';
import { lazySchemaCompilers } from '../../src/http/lazy-schemas.js';
import { startTestService, type TestService } from '../support/helpers.js';

describe('route schemas compiled at first use', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ testMode: true });
  });
  after(() => service.close());

  it('every request and response schema of the app compiles', async () => {
    const app = await buildApp(service.ctx);
    try {
      await app.ready();
      const compiled = app.compilePendingSchemas();
      assert.ok(compiled > 300, `${compiled} schemas compiled`);
      assert.equal(app.compilePendingSchemas(), 0, 'nothing left after');
    } finally {
      await app.close();
    }
  });

  it('a schema that does not compile is caught by compileAll, as Fastify would have at start', async () => {
    const schemas = lazySchemaCompilers();
    const app = Fastify({ schemaController: { compilersFactory: schemas.compilersFactory as never } });
    app.post('/broken', { schema: { body: { type: 'object', properties: { a: { $ref: '#/nowhere' } } } } }, async () => ({}));
    await app.ready();
    assert.throws(() => schemas.compileAll(), /nowhere|can't resolve reference/i);
    await app.close();
  });

  it('a request off its schema is refused with the same 400 as before, and the answer keeps only its declared fields', async () => {
    const schemas = lazySchemaCompilers();
    const lazy = Fastify({
      schemaController: { compilersFactory: schemas.compilersFactory as never },
      ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    });
    const eager = Fastify({ ajv: { customOptions: { removeAdditional: false, coerceTypes: false } } });
    for (const app of [lazy, eager]) {
      app.post(
        '/echo',
        {
          schema: {
            body: Type.Object({ name: Type.String({ minLength: 2 }), n: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
            querystring: Type.Object({ q: Type.Optional(Type.String({ maxLength: 3 })) }),
            response: { 200: Type.Object({ name: Type.String() }) },
          },
        },
        async (request) => ({ ...(request.body as object), secret: 'never written' }),
      );
      await app.ready();
    }
    const cases = [
      { url: '/echo', payload: { name: 'ok', n: 1 } },
      { url: '/echo', payload: { name: 'x' } },
      { url: '/echo', payload: { name: 'ok', extra: true } },
      { url: '/echo', payload: { name: 'ok', n: '1' } },
      { url: '/echo?q=toolong', payload: { name: 'ok' } },
    ];
    for (const { url, payload } of cases) {
      const [a, b] = await Promise.all([lazy, eager].map((app) => app.inject({ method: 'POST', url, payload })));
      assert.equal(a?.statusCode, b?.statusCode, url);
      assert.equal(a?.body, b?.body, `${url} ${JSON.stringify(payload)}`);
    }
    const ok = await lazy.inject({ method: 'POST', url: '/echo', payload: { name: 'ok' } });
    assert.deepEqual(ok.json(), { name: 'ok' }, 'the undeclared field is not written');
    await Promise.all([lazy.close(), eager.close()]);
  });
});
