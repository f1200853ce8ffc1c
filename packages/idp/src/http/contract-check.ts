import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Compile } from 'typebox/schema';

/** An answer the OpenAPI document does not describe: its status is not declared, or its body does not match. */
export interface ContractViolation {
  method: string;
  /** The route as registered, e.g. `/admin/v1/users/:id`. */
  route: string;
  status: number;
  /** The `code` (or OAuth `error`) of a JSON error body, when it has one. */
  code?: string;
  reason: string;
}

/** The test suite's switch for services it does not build itself (startService in a test file): report to stderr, fail the process. */
export const CONTRACT_CHECK_ENV = 'SERVICE_IDP_CONTRACT_CHECK';
/** How each violation's stderr line begins (tests of child processes look for it). */
export const CONTRACT_VIOLATION = 'OpenAPI contract violation:';

/** One line per violation, as the test harness and the stderr report print them. */
export function describeViolation(v: ContractViolation): string {
  return `${v.method} ${v.route} answered ${v.status}${v.code ? ` ${v.code}` : ''}: ${v.reason}`;
}

/** The reporter of CONTRACT_CHECK_ENV: a line on stderr, and the process ends with a failure. */
export function contractViolationToStderr(v: ContractViolation): void {
  process.exitCode = 1;
  process.stderr.write(`${CONTRACT_VIOLATION} ${describeViolation(v)}\n`);
}

type Schema = Record<string, unknown>;

/** @fastify/swagger leaves a route out of the document when it is hidden (should-route-hide.js; this app sets no hideUntagged). */
function hiddenFromDocument(schema: Schema | undefined): boolean {
  if (!schema) return false;
  if (schema.hide === true) return true;
  return Array.isArray(schema.tags) && schema.tags.includes('X-HIDDEN');
}

/** The declared answer for a status: an exact status, its class (`4xx`), or `default`. */
function declaredFor(responses: Record<string, unknown>, status: number): unknown {
  return responses[String(status)] ?? responses[`${String(status)[0]}xx`] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

const mediaTypeOf = (reply: FastifyReply) =>
  String(reply.getHeader('content-type') ?? '')
    .split(';', 1)[0]
    ?.trim()
    .toLowerCase() ?? '';

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/**
 * Test-only (off unless `report` is given): compares every answer of a route in the OpenAPI
 * document with the responses the route declares (`schema.response`, from which
 * @fastify/swagger writes the document): the status must be declared, a JSON answer must
 * validate against the declared body schema, and a declared media type (`content`) must be
 * the one sent. Hidden routes, HEAD routes (left out of the document) and the 404 of unknown
 * paths are not checked. Registered before the routes, so its onSend hook sees every answer,
 * the error handler's included; not the framework's answers before routing (a path parameter
 * over maxParamLength, a malformed URL), which Fastify writes without a reply or its hooks.
 */
export function checkResponsesAgainstDocument(app: FastifyInstance, report: (violation: ContractViolation) => void): void {
  const validators = new WeakMap<object, ReturnType<typeof Compile>>();
  const validatorOf = (schema: Schema) => {
    let validator = validators.get(schema);
    if (!validator) {
      validator = Compile(schema as never);
      validators.set(schema, validator);
    }
    return validator;
  };

  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    try {
      const violation = check(request, reply, payload);
      if (violation) report(violation);
    } catch (error) {
      report({
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        status: reply.statusCode,
        reason: `the check failed: ${String(error)}`,
      });
    }
    done(null, payload);
  });

  function check(request: FastifyRequest, reply: FastifyReply, payload: unknown): ContractViolation | undefined {
    const route = request.routeOptions.url;
    if (request.is404 || route === undefined || request.method === 'HEAD') return undefined;
    const schema = request.routeOptions.schema as Schema | undefined;
    if (hiddenFromDocument(schema)) return undefined;
    const status = reply.statusCode;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    const base = { method: request.method, route, status, ...codeOf(reply, text) };
    // A route without response schemas is documented with a bare 200 (@fastify/swagger's "Default Response").
    const responses = (schema?.response as Record<string, unknown> | undefined) ?? { 200: {} };
    const declared = declaredFor(responses, status) as Schema | undefined;
    if (!declared) return { ...base, reason: `undeclared status (declared: ${Object.keys(responses).join(', ')})` };
    const mediaType = mediaTypeOf(reply);
    const content = declared.content as Record<string, { schema?: Schema }> | undefined;
    if (content) {
      // A described body that is not JSON (rawResponse): the media type is what the document says.
      if (text !== undefined && text !== '' && !Object.keys(content).some((m) => m.toLowerCase() === mediaType)) {
        return { ...base, reason: `media type ${mediaType || '(none)'} (declared: ${Object.keys(content).join(', ')})` };
      }
      return undefined;
    }
    if (text === undefined || text === '' || Object.keys(declared).length === 0) return undefined;
    if (!isJson(mediaType)) return { ...base, reason: `media type ${mediaType || '(none)'} where a JSON body is declared` };
    const validator = validatorOf(declared);
    const body: unknown = JSON.parse(text);
    if (validator.Check(body)) return undefined;
    const [, errors] = validator.Errors(body);
    const detail = errors
      .slice(0, 3)
      .map((e) => `${e.instancePath || '/'} ${e.message}`)
      .join('; ');
    return { ...base, reason: `body does not match the declared schema: ${detail}` };
  }
}

function codeOf(reply: FastifyReply, text: string | undefined): { code?: string } {
  if (text === undefined || !isJson(mediaTypeOf(reply)) || !text.startsWith('{')) return {};
  try {
    const body = JSON.parse(text) as { code?: unknown; error?: unknown };
    const code = typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : undefined;
    return code ? { code } : {};
  } catch {
    return {};
  }
}
