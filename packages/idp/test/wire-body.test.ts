/**
 * `wireBody` (http/schemas.ts) ties each response schema to the protocol's type of that body.
 * Mutual assignability alone let a schema miss or add an optional field: serialization then
 * drops a field the protocol promises, or the OpenAPI document describes one it does not
 * have. The fixture holds schemas that must and must not compile; this test compiles it with
 * the package's own compiler options.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));

describe('wireBody: a response schema has exactly the keys of its wire type', () => {
  it('refuses a missing or extra optional field (flat, per union member, nested) and accepts the exact schema', () => {
    const configPath = join(here, '..', 'tsconfig.json');
    const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, dirname(configPath));
    const options = { ...parsed.options, noEmit: true, composite: false, declaration: false, declarationMap: false, rootDir: undefined };
    const program = ts.createProgram([join(here, 'fixtures', 'wire-body.fixture.ts')], options);
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(diagnostics, []);
  });
});
