/**
 * The parts of an OpenRPC 1.3.2 document the generator reads (as `@nest-jsonrpc/server` writes
 * them). Read from an untrusted file or URL: every field is checked before use.
 */
export type JsonSchema = boolean | { [keyword: string]: unknown };

export interface OpenRpcContentDescriptorInput {
  name: string;
  required?: boolean;
  schema: JsonSchema;
  description?: string;
}

export interface OpenRpcMethodInput {
  name: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
  paramStructure?: 'by-name' | 'by-position' | 'either';
  params: OpenRpcContentDescriptorInput[];
  result?: OpenRpcContentDescriptorInput;
  'x-stream'?: { format?: string; path?: string; durable?: boolean };
}

export interface OpenRpcDocumentInput {
  openrpc: string;
  info: { title: string; version: string };
  methods: OpenRpcMethodInput[];
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Checks the shape the generator relies on; throws a readable error naming the first problem. */
export function assertOpenRpcDocument(value: unknown): asserts value is OpenRpcDocumentInput {
  const fail = (what: string): never => {
    throw new Error(`Not an OpenRPC document: ${what}`);
  };
  if (!isObject(value)) fail('expected a JSON object');
  const doc = value as Record<string, unknown>;
  if (typeof doc.openrpc !== 'string') fail('"openrpc" (the version) is missing');
  if (!isObject(doc.info) || typeof (doc.info as Record<string, unknown>).title !== 'string') fail('"info.title" is missing');
  if (!Array.isArray(doc.methods)) fail('"methods" is not an array');
  for (const [i, m] of (doc.methods as unknown[]).entries()) {
    if (!isObject(m) || typeof m.name !== 'string' || m.name === '') fail(`methods[${i}] has no name`);
    const method = m as Record<string, unknown>;
    if (!Array.isArray(method.params)) fail(`method "${method.name}" has no params array`);
    for (const p of method.params as unknown[]) {
      if (!isObject(p) || typeof p.name !== 'string') fail(`method "${method.name}" has a param without a name (references are not supported)`);
    }
  }
  if (doc.components !== undefined && !isObject(doc.components)) fail('"components" is not an object');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
