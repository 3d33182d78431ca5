import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import { resolveMcpAuthOptions, type JsonRpcMcpAuthOptions, type ResolvedMcpAuthOptions } from './mcp-auth-options.js';
import { check, type OptionProblems } from './option-checks.js';
import { OptionSection, type OptionRow } from './option-section.js';

/** How a tool's result is rendered as its text block (`@RpcMcp({ format })`, `mcp.defaultFormat`). */
export type McpFormatName = 'json' | 'pretty_json' | 'markdown' | 'plain' | 'toon';
/** Every `McpFormatName`, in documentation order (`satisfies`: a name the type lacks fails to compile). */
export const MCP_FORMAT_NAMES = ['json', 'pretty_json', 'markdown', 'plain', 'toon'] as const satisfies readonly McpFormatName[];

/**
 * The hostnames a local MCP endpoint answers by default: a page on another site that re-points its
 * DNS name at 127.0.0.1 (DNS rebinding) sends its own `Host`, so it is refused.
 */
export const DEFAULT_MCP_ALLOWED_HOSTS: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

export interface JsonRpcMcpOptions {
  /** Off by default. */
  enabled?: boolean;
  /**
   * Route of the MCP Streamable HTTP endpoint. Default `/mcp` (REST: `<path>/tools`, `<path>/call`),
   * whatever the top-level `path`: an MCP client is configured with its full URL.
   */
  path?: string;
  /** `serverInfo.name` answered to `initialize`. Default `nest-jsonrpc`. */
  name?: string;
  /** `serverInfo.version`. Default `1.0.0`. */
  version?: string;
  /** Every method is a tool unless a rule hides it. Default false: only `@RpcMcp` methods and `include`. */
  exposeAll?: boolean;
  /** Method names shown as tools whatever their decorators say (`exclude` still wins). */
  include?: readonly string[];
  /** Method names never shown as tools. */
  exclude?: readonly string[];
  /** Method-name prefixes never shown (unless the method is in `include`), e.g. `['admin.']`. */
  excludePrefixes?: readonly string[];
  /** Text rendering of results when the tool says none. Default `json`. */
  defaultFormat?: McpFormatName;
  /** Also serve `GET <path>/tools` and `POST <path>/call` (a REST surface for plain-HTTP clients). Default false. */
  rest?: boolean;
  /**
   * Hostnames (no port; IPv6 in brackets) a `<path>` request may name in `Host`, and in `Origin`
   * when it sends one; anything else gets 403. Default `['localhost', '127.0.0.1', '[::1]']`
   * (DNS-rebinding protection for a local server). A deployment behind a domain lists its names;
   * `['*']` turns the check off (when a proxy in front already checks `Host`).
   */
  allowedHosts?: readonly string[];
  /**
   * The endpoint as an OAuth 2.1 resource server: publishes the Protected Resource Metadata
   * (`/.well-known/oauth-protected-resource`) and answers calls that need identity with 401/403
   * challenges (`WWW-Authenticate: Bearer resource_metadata=…`). Off by default.
   */
  auth?: JsonRpcMcpAuthOptions;
  /** MCP Tasks (durable methods as tasks for clients that negotiate the Tasks extension). */
  tasks?: JsonRpcMcpTasksOptions;
}

export interface JsonRpcMcpTasksOptions {
  /** `pollIntervalMs` suggested to clients polling `tasks/get`. Default 1000. */
  pollIntervalMs?: number;
}

export interface ResolvedMcpOptions {
  readonly enabled: boolean;
  readonly path: string;
  readonly name: string;
  readonly version: string;
  readonly exposeAll: boolean;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly excludePrefixes: readonly string[];
  readonly defaultFormat: McpFormatName;
  readonly rest: boolean;
  /** Lower-case hostnames; empty when the check is off (`['*']`). */
  readonly allowedHosts: readonly string[];
  readonly auth: ResolvedMcpAuthOptions | undefined;
  readonly tasks: { readonly pollIntervalMs: number };
}

/** A hostname or `[ipv6]`, without scheme, port or path. */
const HOSTNAME = /^(?:[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\])$/i;

const tasksSection = new OptionSection<JsonRpcMcpTasksOptions, ResolvedMcpOptions['tasks']>(
  'mcp.tasks',
  { pollIntervalMs: { default: 1000, check: check.integer(1, 3_600_000), doc: '`pollIntervalMs` suggested to clients polling `tasks/get`' } },
  (path) => `Unknown option "${path}"`,
);

/** The `mcp` section (docs/mcp.md has the details of each). */
export const mcpSection = new OptionSection<JsonRpcMcpOptions, ResolvedMcpOptions>('mcp', {
  enabled: { default: false, check: check.boolean, doc: 'chosen methods as MCP tools on Streamable HTTP ([docs/mcp.md](docs/mcp.md#options-mcp))' },
  path: { default: DEFAULT_PATHS.mcp, check: check.basePath, doc: 'its route (REST: `<path>/tools`, `<path>/call`); it does not follow the top-level `path`: an MCP client is given its full URL' },
  name: { default: 'nest-jsonrpc', check: check.nonEmptyString, doc: '`serverInfo.name` answered to `initialize`' },
  version: { default: '1.0.0', check: check.nonEmptyString, doc: '`serverInfo.version`' },
  exposeAll: { default: false, check: check.boolean, doc: 'every method is a tool unless a rule hides it; `false`: only `@RpcMcp` methods and `include`' },
  include: { default: [], check: check.stringList, doc: 'method names shown as tools whatever their decorators say (`exclude` still wins)' },
  exclude: { default: [], check: check.stringList, doc: 'method names never shown as tools' },
  excludePrefixes: { default: [], check: check.stringList, doc: "method-name prefixes never shown (unless in `include`), e.g. `['admin.']`" },
  defaultFormat: { default: 'json', check: check.oneOf(MCP_FORMAT_NAMES), doc: `text rendering of results when the tool says none: ${MCP_FORMAT_NAMES.map((name) => `\`${name}\``).join(', ')}` },
  rest: { default: false, check: check.boolean, doc: 'also serve `GET <path>/tools` and `POST <path>/call`' },
  allowedHosts: {
    resolve: (hosts, _label, problems) => resolveAllowedHosts(hosts as readonly string[] | undefined, problems),
    shown: "`['localhost', '127.0.0.1', '[::1]']`",
    doc: "hostnames a request may name in `Host` (and `Origin`), else 403 (DNS-rebinding protection); `['*']` turns the check off",
  },
  auth: {
    resolve: (auth, _label, problems) => resolveMcpAuthOptions(auth as JsonRpcMcpAuthOptions | undefined, problems),
    doc: 'the endpoint as an OAuth 2.1 resource server ([docs/mcp.md](docs/mcp.md#oauth-21-resource-server-mcpauth))',
  },
  tasks: { resolve: (tasks, _label, problems) => tasksSection.read(tasks, problems), doc: '`{ pollIntervalMs? }` (default 1000): MCP Tasks for durable methods' },
});

/** The rows of docs/mcp.md's `mcp` options table: the section's, and `mcp.tasks`' own. */
export function mcpOptionRows(): OptionRow[] {
  return [...mcpSection.rows().filter((row) => row.option !== 'mcp.tasks'), ...tasksSection.rows()];
}

/** `o`: the `mcp` section, its keys already checked. `taken`: the module's other routes. */
export function resolveMcpOptions(o: JsonRpcMcpOptions, taken: readonly string[], problems: OptionProblems): ResolvedMcpOptions {
  const mcp = mcpSection.resolve(o, problems);
  if (mcp.enabled && taken.includes(mcp.path)) problems.push(`"mcp.path" "${mcp.path}" is already the route of another endpoint`);
  return mcp;
}

function resolveAllowedHosts(hosts: readonly string[] | undefined, problems: OptionProblems): string[] {
  if (hosts === undefined) return [...DEFAULT_MCP_ALLOWED_HOSTS];
  if (!problems.stringList('"mcp.allowedHosts"', hosts, true)) return [];
  if (hosts.length === 1 && hosts[0] === '*') return [];
  const bad = hosts.filter((h) => !HOSTNAME.test(h));
  if (bad.length) {
    problems.push(`"mcp.allowedHosts" takes hostnames without scheme or port (IPv6 in brackets), or ['*'] alone; got ${bad.map((h) => JSON.stringify(h)).join(', ')}`);
  }
  return hosts.map((h) => h.toLowerCase());
}
