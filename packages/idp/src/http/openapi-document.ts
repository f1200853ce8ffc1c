type Json = Record<string, any>;

/** What the document adds beside the routes: OpenAPI 3.1 `webhooks`, and the schemas they refer to. */
export interface DocumentExtras {
  webhooks?: Json;
  schemas?: Json;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
/** A schema worth a name: an object, an array or a composition (a bare string body, such as a page or a script, is not). */
const structured = (schema: Json) =>
  schema.type === 'object' || schema.type === 'array' || Boolean(schema.anyOf ?? schema.oneOf ?? schema.allOf);

/**
 * The document as @fastify/swagger writes it, with names for its bodies and the webhooks the
 * service sends (`extras`, from webhooks/openapi.ts). Every structured request body and success body moves to
 * `components.schemas`, named after its first operation (`ListUsersResponse`,
 * `CreateClientRequest`) and referenced by `$ref`; an identical body elsewhere shares the name.
 * The route schemas, which validate requests and answers, are not touched: only the document.
 */
export function finishDocument(document: Json, extras: DocumentExtras = {}): Json {
  const schemas: Json = { ...document.components?.schemas };
  const names = new Map<string, string>();
  const named = (schema: Json, name: string): Json => {
    if (schema.$ref || !structured(schema)) return schema;
    const key = JSON.stringify(schema);
    let ref = names.get(key);
    if (!ref) {
      ref = name;
      for (let n = 2; schemas[ref] !== undefined; n++) ref = `${name}${n}`;
      schemas[ref] = schema;
      names.set(key, ref);
    }
    return { $ref: `#/components/schemas/${ref}` };
  };
  const nameContent = (content: Json | undefined, name: string) => {
    for (const media of Object.values(content ?? {})) if (media.schema) media.schema = named(media.schema, name);
  };
  for (const item of Object.values<Json>(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation?.operationId) continue;
      const base = pascal(operation.operationId);
      nameContent(operation.requestBody?.content, `${base}Request`);
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {}))
        if (status.startsWith('2')) nameContent(response.content, `${base}Response`);
    }
  }
  Object.assign(schemas, structuredClone(extras.schemas ?? {}));
  return { ...document, components: { ...document.components, schemas }, ...(extras.webhooks ? { webhooks: extras.webhooks } : {}) };
}
