import { STATUS_CODES } from 'node:http';
import type { FastifyInstance } from 'fastify';
import {
  canonicalEmail,
  type ErrorBody,
  type ErrorCode,
  ErrorHttpStatus,
  type MfaMethod,
  OAUTH_ERROR_CODES,
  type OAuthErrorBody,
  type OAuthErrorCode,
  PKCE_CHALLENGE_PATTERN,
  RECOVERY_CODE_PATTERN,
} from 'service-protocol';
import { type Static, type TSchema, Type } from 'typebox';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { CURSOR_MAX_LENGTH } from '../storage/pagination.js';

export const PkceChallenge = Type.String({ pattern: PKCE_CHALLENGE_PATTERN.source });
export const Otp = Type.String({ pattern: '^[0-9]{6}$' });
/** A recovery code as typed (XXXXX-XXXXX, any case; packages/protocol RECOVERY_CODE_PATTERN, whose `i` flag is spelled out here). */
export const RecoveryCode = Type.String({ pattern: RECOVERY_CODE_PATTERN.source.replaceAll('a-tv-z', 'a-tv-zA-TV-Z') });
export const DeviceToken = Type.String({ minLength: 10, maxLength: 100 });
/**
 * An MFA method on the wire: one of the methods the service's factors are (factors/index.ts; the
 * registry's built-ins are service-protocol's MfaMethod, a test holds them equal), so a factor
 * added to the composition is in the OpenAPI document as well.
 */
export const mfaMethodSchema = (methods: readonly string[]) => Type.Unsafe<MfaMethod>({ type: 'string', enum: [...methods] });

/** The canonical mailbox a `userid` names (packages/protocol email.ts), or ERR_EMAIL_INVALID. */
export function emailOf(userid: string): string {
  const email = canonicalEmail(userid);
  if (email === null) throw new ServiceError('ERR_EMAIL_INVALID', 'That is not a valid email address.');
  return email;
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Every named key of an object, and of the objects nested in it (arrays and unions looked
 * through), as dotted paths. An index signature (`Record<string, …>`) names no key: its values'
 * types are compared by `Same`.
 */
type KeyPaths<T> = T extends readonly (infer E)[]
  ? KeyPaths<E>
  : T extends object
    ? { [K in keyof T & string]-?: string extends K ? never : K | `${K}.${KeyPaths<NonNullable<T[K]>>}` }[keyof T & string]
    : never;

/** Same types and the same keys: mutual assignability alone lets an optional field be missing or extra. */
type SameShape<A, B> = Same<A, B> extends true ? Same<KeyPaths<A>, KeyPaths<B>> : false;

/** The members of union A that no member of B matches shape for shape. */
type Unmatched<A, B> = A extends unknown ? (true extends (B extends unknown ? SameShape<A, B> : never) ? never : A) : never;

/** What differs between a schema's type and the wire type, shown in the compile error. */
interface WireMismatch<S, T> {
  schemaMembersNotOnTheWire: Unmatched<S, T>;
  wireMembersNotInTheSchema: Unmatched<T, S>;
  keysOnlyInTheSchema: Exclude<KeyPaths<S>, KeyPaths<T>>;
  keysOnlyOnTheWire: Exclude<KeyPaths<T>, KeyPaths<S>>;
}

/** The schemas that went through wireBody, so a test can tell that every route's answers did. */
const WIRE_BODIES = new WeakSet<object>();

/**
 * A response schema that must describe exactly the protocol's type of that body: the same
 * types and, member by member of a union, the same keys, optional ones included (a compile
 * error otherwise, naming the difference). The schema also drives serialization, which drops
 * any property it omits, so a field added to the protocol and not here fails the build
 * instead of vanishing, and a field the protocol does not have cannot be documented.
 */
export const wireBody =
  <T>() =>
  <S extends TSchema>(
    schema: S,
    ..._exact: [Unmatched<Static<S>, T> | Unmatched<T, Static<S>>] extends [never]
      ? Same<Static<S>, T> extends true
        ? []
        : [mismatch: WireMismatch<Static<S>, T>]
      : [mismatch: WireMismatch<Static<S>, T>]
  ): S => {
    WIRE_BODIES.add(schema);
    return schema;
  };

/** Whether a response schema was tied to a protocol type by wireBody. */
export const isWireBody = (schema: unknown): boolean => typeof schema === 'object' && schema !== null && WIRE_BODIES.has(schema);

const ERROR_CODES = Object.keys(ErrorHttpStatus) as ErrorCode[];

/** ERR_CHALLENGE_REQUIRED's proof of work (packages/protocol SendChallenge; docs/protocol.md, "Send challenge"). */
const SendChallengeSchema = Type.Object(
  {
    kind: Type.Optional(Type.Literal('pow')),
    parameters: Type.Object({
      algorithm: Type.Literal('SHA-256'),
      cost: Type.Integer(),
      expiresAt: Type.Integer({ description: 'seconds since the epoch after which no solution is accepted' }),
      keyLength: Type.Integer(),
      keyPrefix: Type.String({ description: 'hex the derived key must start with' }),
      nonce: Type.String(),
      salt: Type.String(),
      data: Type.Object({ binding: Type.String({ description: 'the address and endpoint it was issued for, as a keyed hash' }) }),
    }),
    signature: Type.String(),
  },
  { description: 'a proof of work to solve before sending the same request again with its solution (x-service-challenge-solution)' },
);

/** ERR_CHALLENGE_REQUIRED's CAPTCHA, when the operator chose one (packages/protocol CaptchaChallenge). */
const CaptchaChallengeSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('turnstile'), Type.Literal('hcaptcha')]),
    siteKey: Type.String({ description: "the operator's site key to render the widget with" }),
    action: Type.String({ description: "the endpoint the token is for (Turnstile's action)" }),
  },
  { description: "the operator's CAPTCHA: its widget's token is the solution (x-service-challenge-solution)" },
);

const errorBody = (codes: ErrorCode[], description: string) =>
  Type.Object(
    {
      code: Type.Unsafe<ErrorCode>({ type: 'string', enum: codes }),
      message: Type.String(),
      retryAfter: Type.Optional(Type.Integer({ description: 'seconds until a rate-limited or locked request may be retried' })),
      attemptsRemaining: Type.Optional(Type.Integer({ description: 'wrong guesses still allowed on this OTP challenge' })),
      challenge: Type.Optional(Type.Union([SendChallengeSchema, CaptchaChallengeSchema])),
    },
    { description },
  );

/** `{ code, message }` (packages/protocol errors.ts), every code allowed. */
export const ErrorBodySchema = wireBody<ErrorBody>()(errorBody(ERROR_CODES, 'Error'));

/**
 * The `{ code, message }` answers of a route, by status; each lists the codes the protocol
 * gives that status (ErrorHttpStatus). 413 and 415 are the framework's own refusals (a body
 * too large, a media type not parsed), sent as ERR_REQUEST_INVALID with that status.
 */
export function errorResponses<const S extends number>(...statuses: S[]): Record<S, typeof ErrorBodySchema> {
  const entries = statuses.map((status) => {
    const codes =
      status === 413 || status === 415 ? ['ERR_REQUEST_INVALID' as const] : ERROR_CODES.filter((c) => ErrorHttpStatus[c] === status);
    if (codes.length === 0) throw new Error(`No error code has the HTTP status ${status}.`);
    return [status, errorBody(codes, `${STATUS_CODES[status]}: ${codes.join(', ')}`)];
  });
  return Object.fromEntries(entries) as Record<S, typeof ErrorBodySchema>;
}

/** The statuses any route may answer: an unexpected failure (500 ERR_INTERNAL), an unreachable database (503). */
export const SERVER_ERRORS = [500, 503] as const;
/** Refusals of a request body before any handler runs: invalid (400), too large (413), not a parsed media type (415). */
export const BODY_ERRORS = [400, 413, 415] as const;

/** RFC 6749 5.2 error body of the token endpoint. */
export const OAuthErrorBodySchema = wireBody<OAuthErrorBody>()(
  Type.Object(
    {
      error: Type.Unsafe<OAuthErrorCode>({ type: 'string', enum: [...OAUTH_ERROR_CODES] }),
      error_description: Type.String(),
    },
    { description: 'RFC 6749 5.2 error' },
  ),
);

/** A response that is not JSON: the media type and a description, for the document only (nothing is serialized). */
export const rawResponse = (mediaType: string, description: string) => ({
  description,
  content: { [mediaType]: { schema: { type: 'string' } } },
});

/** Digits only, short enough to stay an exact JavaScript number (below 2^53). */
const DECIMAL_DIGITS = /^[0-9]{1,15}$/;

/**
 * Query parameters declared `Type.Integer` arrive as text, and the validator does not coerce
 * (app.ts: `coerceTypes: false`). Before validation, a value of decimal digits only becomes
 * its number; anything else (`1e3`, `+5`, `5.0`, `0x10`, a repeated parameter) stays as sent
 * and the integer schema refuses it with the usual 400. So the document can type these
 * parameters as integers, and means it.
 */
export function decimalQueryIntegers(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const querystring = request.routeOptions.schema?.querystring as { properties?: Record<string, { type?: unknown }> } | undefined;
    const query = request.query as Record<string, unknown> | undefined;
    if (querystring?.properties && typeof query === 'object' && query !== null) {
      for (const [name, schema] of Object.entries(querystring.properties)) {
        const value = query[name];
        if (schema.type === 'integer' && typeof value === 'string' && DECIMAL_DIGITS.test(value)) query[name] = Number(value);
      }
    }
    done();
  });
}

/** The query parameters of a paged listing (the admin API's lists): a page size and the previous page's nextCursor. */
export const PageParams = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, description: `rows per page (default ${PAGE_SIZE_DEFAULT})` })),
  cursor: Type.Optional(Type.String({ maxLength: CURSOR_MAX_LENGTH, description: 'nextCursor of the previous page' })),
};
