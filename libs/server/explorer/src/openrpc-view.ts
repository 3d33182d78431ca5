/** The OpenRPC document as the explorer reads it (written by @nest-jsonrpc/server). */
export type JsonSchema = boolean | Record<string, unknown>;

export interface StreamInfo {
  format: string;
  path: string;
  durable: boolean;
  streamsPath?: string;
}

/** `x-sign-in`: the login method, and how to send the token it answers. */
export interface SignInInfo {
  tokenPath: string;
  header: string;
  scheme: string;
}

export interface ExplorerMethod {
  name: string;
  summary?: string;
  description?: string;
  tags?: Array<{ name: string }>;
  deprecated?: boolean;
  paramStructure?: string;
  params: Array<{ name: string; required?: boolean; schema: JsonSchema }>;
  result?: { name: string; schema: JsonSchema };
  errors?: Array<{ code: number; message: string }>;
  'x-stream'?: StreamInfo;
  'x-sign-in'?: SignInInfo;
}

export interface ExplorerDocument {
  openrpc: string;
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string }>;
  methods: ExplorerMethod[];
  components?: { schemas?: Record<string, JsonSchema> };
}

export const UNTAGGED = 'other';

/** Methods by tag, tags in first-seen order; a method with several tags is listed under each. */
export function methodsByTag(methods: readonly ExplorerMethod[]): Map<string, ExplorerMethod[]> {
  const groups = new Map<string, ExplorerMethod[]>();
  for (const method of methods) {
    const tags = method.tags?.length ? method.tags.map((t) => t.name) : [UNTAGGED];
    for (const tag of tags) {
      let group = groups.get(tag);
      if (!group) groups.set(tag, (group = []));
      group.push(method);
    }
  }
  return groups;
}

/**
 * The explorer talks to its own origin only: the JSON-RPC path is taken from `servers[0].url`
 * (absolute in the document) and resolved against the page's origin.
 */
export function rpcUrlOf(doc: ExplorerDocument, origin: string): string {
  const server = doc.servers?.[0]?.url;
  let path = '/rpc';
  if (server) {
    try {
      path = new URL(server, origin).pathname;
    } catch {
      // keep the default
    }
  }
  return new URL(path, origin).href;
}

/** The durable streams' REST base (`GET <it>` lists, `GET <it>/:id` attaches), when a listed method is durable. */
export function streamsPathOf(doc: ExplorerDocument): string | undefined {
  return doc.methods.find((m) => m['x-stream']?.durable && m['x-stream'].streamsPath)?.['x-stream']?.streamsPath;
}

/** The method that signs in (`x-sign-in`), if the document lists one. */
export function signInMethodOf(doc: ExplorerDocument): ExplorerMethod | undefined {
  return doc.methods.find((m) => m['x-sign-in']);
}

/**
 * The method takes no params at all (the server describes it with no params, by name only): the
 * page shows no editor. A method with undescribed params (`either`, none listed) gets the JSON editor.
 */
export function takesNoParams(method: ExplorerMethod): boolean {
  return method.params.length === 0 && method.paramStructure === 'by-name';
}

export function resolveSchema(schema: JsonSchema, doc: ExplorerDocument): JsonSchema {
  if (typeof schema === 'object' && typeof schema.$ref === 'string' && schema.$ref.startsWith('#/components/schemas/')) {
    return doc.components?.schemas?.[schema.$ref.slice('#/components/schemas/'.length)] ?? {};
  }
  return schema;
}
