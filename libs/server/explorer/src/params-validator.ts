import AjvModule, { type ErrorObject } from 'ajv';
import formatsModule from 'ajv-formats';
import type { ExplorerDocument, ExplorerMethod, JsonSchema } from './openrpc-view.js';

// CommonJS packages: their classes sit on `.default` under NodeNext typing and esbuild interop alike.
const Ajv = AjvModule.default;
const addFormats = formatsModule.default;

export interface FieldError {
  /** The top-level param it concerns, or '' for the params as a whole. */
  field: string;
  /** `address.city`-style path inside the params. */
  path: string;
  message: string;
}

/**
 * Validates params against a method's schema in the browser, with ajv (the components become
 * `definitions` of one schema, so `$ref`s resolve without any network).
 */
export function paramsValidator(method: ExplorerMethod, doc: ExplorerDocument): (params: unknown) => FieldError[] {
  if (method.params.length === 0) return () => [];
  const properties = Object.fromEntries(method.params.map((p) => [p.name, rewrite(p.schema)]));
  const required = method.params.filter((p) => p.required).map((p) => p.name);
  const definitions = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).map(([name, s]) => [name, rewrite(s)]));
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  // An OpenAPI hint for masked inputs, not a constraint: any string is one.
  ajv.addFormat('password', true);
  let validate: ReturnType<InstanceType<typeof Ajv>['compile']>;
  try {
    validate = ajv.compile({ type: 'object', properties, required, additionalProperties: false, definitions });
  } catch (error) {
    const message = `The schema could not be compiled: ${(error as Error).message}`;
    return () => [{ field: '', path: '', message }];
  }
  return (params) => {
    if (validate(params)) return [];
    return (validate.errors ?? []).map(toFieldError);
  };
}

function toFieldError(error: ErrorObject): FieldError {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') segments.push(String((error.params as { missingProperty: string }).missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String((error.params as { additionalProperty: string }).additionalProperty));
  const message = error.keyword === 'required' ? 'is required' : error.keyword === 'additionalProperties' ? 'is not a known parameter' : (error.message ?? 'is invalid');
  return { field: segments[0] ?? '', path: segments.join('.'), message };
}

/** `#/components/schemas/X` -> `#/definitions/X`; everything else is copied as is. */
function rewrite(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema), (key, value) =>
    key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/') ? `#/definitions/${value.slice('#/components/schemas/'.length)}` : value,
  );
}
