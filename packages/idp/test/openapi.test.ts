/**
 * The OpenAPI 3.1 document the service serves: generated from the route schemas, valid for
 * an OpenAPI validator (@apidevtools/swagger-parser), covering every route the service answers,
 * with the admin API fully described (bearer key, parameters, every response).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Paths } from 'service-protocol';
import { OPENAPI_PATH } from '../src/http/openapi.js';
import { startTestService, type TestService } from './helpers.js';

describe('OpenAPI document', () => {
  let service: TestService;
  let document: any;
  before(async () => {
    service = await startTestService();
    const response = await fetch(service.url + OPENAPI_PATH);
    assert.equal(response.status, 200);
    document = await response.json();
  });
  after(() => service.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(document.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(document));
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

  it('describes every admin operation: bearer key, and a schema for each response', () => {
    const admin = Object.entries(document.paths).filter(([path]) => path.startsWith('/admin/v1/'));
    assert.ok(admin.length >= 10);
    for (const [path, operations] of admin) {
      for (const [method, operation] of Object.entries(operations as Record<string, any>)) {
        assert.deepEqual(operation.security, [{ adminKey: [] }], `${method} ${path}`);
        for (const status of ['401', '404'])
          assert.ok(operation.responses[status]?.content?.['application/json']?.schema, `${method} ${path} ${status}`);
        const success = Object.keys(operation.responses).filter((s) => s.startsWith('2'));
        assert.equal(success.length, 1, `${method} ${path} declares its success`);
      }
    }
    assert.equal(document.components.securitySchemes.adminKey.scheme, 'bearer');
  });
});
