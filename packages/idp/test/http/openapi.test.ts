/**
 * The OpenAPI 3.1 document the service serves: generated from the route schemas, valid for
 * an OpenAPI validator (@apidevtools/swagger-parser), covering every route the service answers,
 * each with a schema for its success and its error answers, and in step with docs/protocol.md.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { ErrorHttpStatus, Paths } from 'service-protocol';
import { Compile } from 'typebox/schema';
import { EVENT_TYPES } from '../../src/events/types.js';
import { OPENAPI_PATH } from '../../src/http/openapi.js';
import { webhookPayload } from '../../src/webhooks/fan-out.js';
import { startTestService, type TestService } from '../support/helpers.js';

const run = promisify(execFile);

describe('OpenAPI document', () => {
  let service: TestService;
  let document: any;
  before(async () => {
    // Client registration on, so that the document holds every operation the service can serve (/oauth/register is off by default).
    service = await startTestService({ env: { SERVICE_IDP_CLIENT_REGISTRATION: 'open' } });
    const response = await fetch(service.url + OPENAPI_PATH);
    assert.equal(response.status, 200);
    document = await response.json();
  });
  after(() => service.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(document.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(document));
  });

  it("passes Redocly's recommended rules without an error", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const redocly = fileURLToPath(new URL('../../../../node_modules/.bin/redocly', import.meta.url));
      // Exits non-zero on an error; the JSON report lists each problem (warnings are allowed).
      const { stdout } = await run(redocly, ['lint', '--extends=recommended', '--format=json', file], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const { problems } = JSON.parse(stdout) as {
        problems: { severity: string; ruleId: string; message: string; location: { pointer: string }[] }[];
      };
      const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
      assert.deepEqual(errors, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('covers the browser, OAuth/OIDC, delegation and admin routes', () => {
    const paths = Object.keys(document.paths);
    for (const path of [
      Paths.authenticate,
      Paths.verifyEmailOtp,
      Paths.verifyDevice,
      Paths.mfaInitiate,
      Paths.mfaVerify,
      Paths.listDevices,
      Paths.revokeDevice,
      Paths.delegation,
      Paths.token,
      Paths.userinfo,
      Paths.jwks,
      Paths.discovery,
      '/admin/v1/users',
      '/admin/v1/users/{id}',
      '/admin/v1/users/{id}/export',
      '/admin/v1/events',
      '/admin/v1/clients',
      '/admin/v1/admin-keys',
    ])
      assert.ok(paths.includes(path), `${path} is documented`);
    assert.ok(!paths.includes(OPENAPI_PATH), 'the document does not describe itself');
  });

  it('describes every admin operation: bearer key or console session, and a schema for each response', () => {
    const admin = Object.entries(document.paths).filter(([path]) => path.startsWith('/admin/v1/'));
    assert.ok(admin.length >= 10);
    for (const [path, operations] of admin) {
      for (const [method, operation] of Object.entries(operations as Record<string, any>)) {
        assert.deepEqual(operation.security, [{ adminKey: [] }, { consoleSession: [] }], `${method} ${path}`);
        for (const status of ['401', '403', '404'])
          assert.ok(operation.responses[status]?.content?.['application/json']?.schema, `${method} ${path} ${status}`);
        const success = Object.keys(operation.responses).filter((s) => s.startsWith('2'));
        assert.equal(success.length, 1, `${method} ${path} declares its success`);
      }
    }
    assert.equal(document.components.securitySchemes.adminKey.scheme, 'bearer');
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, any>).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    );

  it('names and summarizes every operation, each name once (client generators name their functions after it)', () => {
    const names = new Set<string>();
    for (const { name, operation } of operations()) {
      assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${name} has a camelCase operationId`);
      assert.ok(!names.has(operation.operationId), `${name}: operationId ${operation.operationId} is unique`);
      names.add(operation.operationId);
      assert.ok(typeof operation.summary === 'string' && operation.summary.length > 0, `${name} has a summary`);
    }
  });

  it('applies the publishable key to every browser route', () => {
    const browser = operations().filter(({ name }) => name.split(' ')[1]?.startsWith('/v1/') && name !== `POST ${Paths.delegation}`);
    assert.ok(browser.length >= 15);
    for (const { name, operation } of browser) assert.deepEqual(operation.security, [{ publishableKey: [] }], name);
    assert.equal(document.components.securitySchemes.publishableKey.in, 'header');
  });

  it('types the page sizes and times of the admin queries as integers, and the service reads them so', async () => {
    const query = (path: string, name: string) =>
      document.paths[path].get.parameters.find((p: any) => p.in === 'query' && p.name === name)?.schema;
    assert.deepEqual(query('/admin/v1/users', 'limit'), {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
    });
    for (const [path, name] of [
      ['/admin/v1/events', 'limit'],
      ['/admin/v1/events', 'since'],
    ] as const)
      assert.equal(query(path, name).type, 'integer', `${path} ${name}`);
    const { key } = await service.ctx.adminKeys.create('openapi', 'cli');
    const get = async (path: string) => {
      const response = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: response.status, body: (await response.json()) as any };
    };
    for (const path of ['/admin/v1/users?limit=10', '/admin/v1/events?limit=10&since=0']) assert.equal((await get(path)).status, 200, path);
    for (const path of ['/admin/v1/users?limit=abc', '/admin/v1/users?limit=1e3', '/admin/v1/events?since=1.5', '/admin/v1/users?limit=']) {
      const answer = await get(path);
      assert.equal(answer.status, 400, path);
      assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'message'], path);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', path);
    }
  });

  it('names every request body and success body in components.schemas', () => {
    const schemas = document.components.schemas;
    let bodies = 0;
    for (const { name, operation } of operations()) {
      const contents = [
        ['request', operation.requestBody?.content],
        ...Object.entries(operation.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([status, response]: [string, any]) => [status, response.content]),
      ] as const;
      for (const [what, content] of contents)
        for (const [mediaType, body] of Object.entries((content ?? {}) as Record<string, any>)) {
          // A page, a script or a sealed JWE is a bare string: nothing to name.
          if (body.schema.type === 'string') continue;
          bodies++;
          const ref = /^#\/components\/schemas\/([A-Za-z0-9]+)$/.exec(body.schema.$ref ?? '')?.[1];
          assert.ok(ref && schemas[ref], `${name} ${what} ${mediaType} is a named schema`);
        }
    }
    assert.ok(bodies >= 60, `${bodies} bodies`);
    assert.ok(schemas.ListUsersResponse && schemas.CreateClientRequest);
  });

  it('lists every webhook event with its payload and the Standard Webhooks headers', () => {
    assert.deepEqual(Object.keys(document.webhooks).sort(), [...EVENT_TYPES].sort());
    for (const [type, item] of Object.entries(document.webhooks as Record<string, any>)) {
      const { post } = item;
      assert.ok(post.operationId && post.summary, type);
      assert.deepEqual(
        post.parameters.map((p: any) => `${p.in} ${p.name}`),
        ['header webhook-id', 'header webhook-timestamp', 'header webhook-signature'],
      );
      const [base, own] = post.requestBody.content['application/json'].schema.allOf;
      assert.equal(base.$ref, '#/components/schemas/WebhookMessage');
      assert.equal(own.properties.type.const, type);
    }
    // The schema is the one a delivery's body is written to.
    const event = {
      id: 'evt_1',
      type: 'user.created',
      at: 1,
      userId: 'usr_1',
      clientId: null,
      deviceId: null,
      ip: '1.2.3.4',
      userAgent: 'x',
      actor: 'cli',
      detail: { n: 1 },
    };
    assert.ok(Compile(document.components.schemas.WebhookMessage).Check(JSON.parse(webhookPayload(event))));
  });

  it('gives every route a schema for its success answer', () => {
    // A route registered without one shows only @fastify/swagger's bare "Default Response".
    assert.ok(operations().length >= 35);
    for (const { name, operation } of operations()) {
      const success = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      // /authorize succeeds with a redirect (RFC 6749 4.1.2): its 303 stands for the 2xx.
      if (success.length === 0 && operation.responses['303']) continue;
      assert.equal(success.length, 1, `${name} declares one success status`);
      const status = success[0] as string;
      if (status === '204') continue;
      const content = Object.entries(operation.responses[status].content ?? {});
      assert.ok(content.length > 0, `${name} ${status} has a body`);
      for (const [mediaType, body] of content) assert.ok((body as any).schema, `${name} ${status} ${mediaType} has a schema`);
    }
  });

  it('lists, for each error status, the codes the protocol gives that status', () => {
    for (const { name, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        const schema = response.content?.['application/json']?.schema;
        if (Number(status) < 400 || !schema?.properties?.code) continue;
        const framework = status === '413' || status === '415';
        for (const code of schema.properties.code.enum as (keyof typeof ErrorHttpStatus)[])
          assert.equal(framework ? 400 : ErrorHttpStatus[code], framework ? 400 : Number(status), `${name} ${status} ${code}`);
        assert.ok(schema.properties.retryAfter && schema.properties.attemptsRemaining, `${name} ${status}: the whole error body`);
      }
    }
    const token = document.paths[Paths.token].post.responses;
    for (const status of ['400', '401']) assert.ok(token[status].content['application/json'].schema.properties.error_description, status);
  });

  it('documents the paths of docs/protocol.md, and protocol.md every path outside the admin API', () => {
    const protocol = readFileSync(new URL('../../../../docs/protocol.md', import.meta.url), 'utf8');
    const endpoints = protocol.slice(protocol.indexOf('## 4. Endpoints'), protocol.indexOf('## 5. '));
    const headed = new Set(
      endpoints
        .split('\n')
        .filter((line) => line.startsWith('### '))
        .flatMap((line) => line.match(/\/[A-Za-z0-9._{}/-]*/g) ?? []),
    );
    // Documented in prose, left out of the document on purpose (protocol.md says why).
    const hidden = new Set([Paths.devMail, Paths.devSms, '/metrics']);
    const documented = Object.keys(document.paths);
    for (const path of headed) if (!hidden.has(path)) assert.ok(documented.includes(path), `${path} (protocol.md) is in the document`);
    for (const path of documented.filter((p) => !p.startsWith('/admin/v1/'))) {
      const named = new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9._/{}-])`);
      assert.match(endpoints, named, `${path} is described in protocol.md's endpoints`);
    }
  });
});
