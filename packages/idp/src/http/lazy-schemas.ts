import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

/** A route's part as Fastify hands it to a compiler (the schema, and where it is used). */
type RouteSchema = { schema?: unknown; method?: string; url?: string; httpPart?: string; httpStatus?: string; contentType?: string };
/** An Ajv validator as Fastify calls it: `schemaEnv` set means "pass the parent data", `errors` read after a `false`. */
type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serialize = (doc: unknown) => string;

declare module 'fastify' {
  interface FastifyInstance {
    /** Compiles the routes' schemas no request has used yet (http/lazy-schemas.ts); the number compiled. */
    compilePendingSchemas: LazySchemaCompilers['compileAll'];
  }
}

/** Fastify's schema controller options (`schemaController`), with this module's compilers, and what forces them. */
export interface LazySchemaCompilers {
  compilersFactory: {
    buildValidator: (externalSchemas: unknown, ajvOptions: unknown) => (route: RouteSchema) => Validate;
    buildSerializer: (externalSchemas: unknown, serializerOptions: unknown) => (route: RouteSchema) => Serialize;
  };
  /** Compiles every schema not compiled yet; throws as Fastify would have at start (a test proves every route's schemas compile). */
  compileAll(): number;
}

/**
 * Fastify compiles every route's request validators (Ajv) and response serializers
 * (fast-json-stringify) when the route is added: for this service's few hundred routes that is
 * about 1.5 s of CPU at each start, most of a test file's service start and a good part of `npm
 * start`. These compilers compile a route's schema the first time the route uses it, with the
 * very compilers Fastify uses by default (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler)
 * and the options the app gives them, so what is accepted, refused and written is unchanged;
 * what a request never reaches is never compiled. The cost of that: a schema that does not
 * compile would fail at its route's first request rather than at start, so a test compiles them
 * all (`compileAll`, test/http/lazy-schemas.test.ts).
 */
export function lazySchemaCompilers(): LazySchemaCompilers {
  const pending = new Set<() => unknown>();
  const validators = AjvCompiler();
  const serializers = SerializerSelector();

  /** A value made on first use, listed until then so that compileAll can make it. */
  function once<T>(make: () => T): () => T {
    let made: { value: T } | undefined;
    const force = () => {
      if (!made) {
        made = { value: make() };
        pending.delete(force);
      }
      return made.value;
    };
    pending.add(force);
    return force;
  }

  return {
    compilersFactory: {
      buildValidator(externalSchemas, ajvOptions) {
        const compiler = once(() => validators(externalSchemas as never, ajvOptions as never));
        return (route) => {
          const compiled = once(() => compiler()(route as never) as Validate);
          const validate: Validate = (data, context) => {
            const real = compiled();
            const valid = context === undefined ? real(data) : real(data, context);
            validate.errors = real.errors;
            return valid;
          };
          // Ajv's functions take the parent data (Fastify passes it when this is set) to replace a root value.
          validate.schemaEnv = true;
          return validate;
        };
      },
      buildSerializer(externalSchemas, serializerOptions) {
        const compiler = once(() => serializers(externalSchemas, serializerOptions as never));
        return (route) => {
          const compiled = once(() => compiler()(route as never));
          return (doc) => compiled()(doc);
        };
      },
    },
    compileAll() {
      let count = 0;
      for (const force of [...pending]) {
        force();
        count++;
      }
      return count;
    },
  };
}
