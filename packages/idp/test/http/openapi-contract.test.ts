/**
 * The contract check the whole suite runs under (http/contract-check.ts, helpers.ts): every
 * answer of a route in the OpenAPI document must have a declared status and match its declared
 * body. Proven here on a tiny app, so the check cannot pass silently: an undeclared status, a
 * body off its schema and an undeclared media type are caught; routes out of the document are not checked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { type ContractViolation, checkResponsesAgainstDocument } from '../../src/http/contract-check.js';
import { errorResponses, rawResponse } from '../../src/http/schemas.js';

async function tinyApp() {
  const violations: ContractViolation[] = [];
  const app = Fastify();
  checkResponsesAgainstDocument(app, (v) => violations.push(v));
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } } });
  const ok = { response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses(401) } };
  app.get('/teapot', { schema: ok }, async (_request, reply) => reply.code(418).send({ status: 'ok' }));
  app.get('/ok', { schema: ok }, async () => ({ status: 'ok' }));
  app.get('/wrong-code', { schema: ok }, async (_request, reply) =>
    reply.code(401).send({ code: 'ERR_NOT_FOUND', message: 'not a 401 code' }),
  );
  app.get('/refused', { schema: ok }, async (_request, reply) =>
    reply.code(401).send({ code: 'ERR_CLIENT_KEY_INVALID', message: 'no key' }),
  );
  app.get('/page', { schema: { response: { 200: rawResponse('text/html', 'a page') } } }, async (_request, reply) =>
    reply.type('text/plain').send('not html'),
  );
  app.get('/failing', { schema: ok }, async () => {
    throw new Error('boom');
  });
  app.get('/hidden', { schema: { hide: true, response: { 200: Type.Object({}) } } }, async (_request, reply) => reply.code(418).send({}));
  app.get('/tagged-hidden', { schema: { tags: ['X-HIDDEN'] } }, async (_request, reply) => reply.code(418).send({}));
  await app.ready();
  return { app, violations };
}

describe('OpenAPI contract check', () => {
  it('flags a status the route does not declare', async () => {
    const { app, violations } = await tinyApp();
    assert.equal((await app.inject('/teapot')).statusCode, 418);
    assert.equal(violations.length, 1);
    assert.deepEqual({ ...violations[0], reason: undefined }, { method: 'GET', route: '/teapot', status: 418, reason: undefined });
    assert.match(violations[0]?.reason ?? '', /undeclared status \(declared: 200, 401\)/);
    await app.close();
  });

  it('flags a JSON body off its schema (a code the status does not have), a media type not declared, an unexpected 500', async () => {
    const { app, violations } = await tinyApp();
    await app.inject('/wrong-code');
    await app.inject('/page');
    await app.inject('/failing');
    assert.deepEqual(
      violations.map((v) => [v.route, v.status, v.code]),
      [
        ['/wrong-code', 401, 'ERR_NOT_FOUND'],
        ['/page', 200, undefined],
        ['/failing', 500, 'Internal Server Error'],
      ],
    );
    assert.match(violations[0]?.reason ?? '', /body does not match/);
    assert.match(violations[1]?.reason ?? '', /media type text\/plain/);
    await app.close();
  });

  it('passes declared answers, and leaves out what the document leaves out (hidden routes, unknown paths)', async () => {
    const { app, violations } = await tinyApp();
    for (const path of ['/ok', '/refused', '/hidden', '/tagged-hidden', '/nowhere']) await app.inject(path);
    assert.deepEqual(violations, []);
    const documented = Object.keys((app.swagger() as { paths: Record<string, unknown> }).paths);
    assert.deepEqual(documented.sort(), ['/failing', '/ok', '/page', '/refused', '/teapot', '/wrong-code']);
    await app.close();
  });
});
