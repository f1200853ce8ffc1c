/**
 * `wireBody` (http/schemas.ts) ties each response schema to the protocol's type of that body.
 * Mutual assignability alone let a schema miss or add an optional field: serialization then
 * drops a field the protocol promises, or the OpenAPI document describes one it does not
 * have. The fixture holds schemas that must and must not compile; this test compiles it with
 * the package's own compiler options. Every JSON success answer of the admin API (webhooks
 * included) and of the OIDC endpoints must be such a schema: before, theirs were bare TypeBox
 * objects, which no protocol type checked.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RouteOptions } from 'fastify';
import { Paths } from 'service-protocol';
import ts from 'typescript';
import { buildApp } from '../../src/app.js';
import { isWireBody } from '../../src/http/schemas.js';
import { startTestService } from '../support/helpers.js';

const here = dirname(fileURLToPath(import.meta.url));

describe('wireBody: a response schema has exactly the keys of its wire type', () => {
  it('refuses a missing or extra optional field (flat, per union member, nested) and accepts the exact schema', () => {
    const configPath = join(here, '..', '..', 'tsconfig.json');
    const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, dirname(configPath));
    const options = { ...parsed.options, noEmit: true, composite: false, declaration: false, declarationMap: false, rootDir: undefined };
    const program = ts.createProgram([join(here, 'fixtures', 'wire-body.fixture.ts')], options);
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(diagnostics, []);
  });
});

describe('every JSON success answer of the admin API and the OIDC endpoints goes through wireBody', () => {
  it('ties each 2xx JSON response schema of those routes to a protocol type', async () => {
    const service = await startTestService();
    const routes: RouteOptions[] = [];
    const app = await buildApp(service.ctx, { onRoute: (route) => routes.push(route) });
    try {
      await app.ready();
      const covered = (url: string) =>
        url.startsWith('/admin/v1/') ||
        [Paths.token, Paths.revocation, Paths.userinfo, Paths.jwks, Paths.discovery, Paths.endSession].includes(url as never) ||
        url.startsWith(Paths.signIn);
      const unguarded: string[] = [];
      let checked = 0;
      for (const route of routes.filter((r) => covered(r.url))) {
        const responses = (route.schema?.response ?? {}) as Record<string, any>;
        for (const [status, schema] of Object.entries(responses)) {
          // Not JSON (an HTML page, a script), a redirect, or no body at all.
          if (!status.startsWith('2') || schema.content || !schema.type || schema.type === 'null') continue;
          checked++;
          if (!isWireBody(schema)) unguarded.push(`${String(route.method)} ${route.url} ${status}`);
        }
      }
      assert.ok(checked >= 20, `${checked} answers checked`);
      assert.deepEqual(unguarded, []);
      // The JWKS schema names each key type's members: none is dropped by serialization.
      const { keys } = (await (await fetch(service.jwksUrl)).json()) as { keys: Array<Record<string, string>> };
      const members = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'] } as Record<string, string[]>;
      for (const key of keys) for (const member of members[key.kty] ?? ['missing']) assert.ok(key[member], `${key.kty} ${member}`);
    } finally {
      await app.close();
      await service.close();
    }
  });
});
