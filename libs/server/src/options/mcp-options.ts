import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { OptionProblems } from './option-checks.js';

/** How a tool's result is rendered as its text block (`@RpcMcp({ format })`, `mcp.defaultFormat`). */
export const MCP_FORMAT_NAMES = ['json', 'pretty_json', 'markdown', 'plain', 'toon'] as const;
export type McpFormatName = (typeof MCP_FORMAT_NAMES)[number];

/**
 * The hostnames a local MCP endpoint answers by default: a page on another site that re-points its
 * DNS name at 127.0.0.1 (DNS rebinding) sends its own `Host`, so it is refused.
 */
export const DEFAULT_MCP_ALLOWED_HOSTS: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

export interface JsonRpcMcpOptions {
  /** Off by default. */
  enabled?: boolean;
  /** Route of the MCP Streamable HTTP endpoint. Default `/mcp` (REST: `<path>/tools`, `<path>/call`). */
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
  /** Also serve `GET <path>/tools` and `POST <path>/call` (the Symfony bundle's REST surface). Default false. */
  rest?: boolean;
  /**
   * Hostnames (no port; IPv6 in brackets) a `<path>` request may name in `Host`, and in `Origin`
   * when it sends one; anything else gets 403. Default `['localhost', '127.0.0.1', '[::1]']`
   * (DNS-rebinding protection for a local server). A deployment behind a domain lists its names;
   * `['*']` turns the check off (when a proxy in front already checks `Host`).
   */
  allowedHosts?: readonly string[];
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
}

export const MCP_KEYS = ['enabled', 'path', 'name', 'version', 'exposeAll', 'include', 'exclude', 'excludePrefixes', 'defaultFormat', 'rest', 'allowedHosts'];

/** A hostname or `[ipv6]`, without scheme, port or path. */
const HOSTNAME = /^(?:[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\])$/i;

/** `o`: the `mcp` section, its keys already checked. `taken`: the module's other routes. */
export function resolveMcpOptions(o: JsonRpcMcpOptions, taken: readonly string[], problems: OptionProblems): ResolvedMcpOptions {
  const enabled = o.enabled ?? false;
  problems.boolean('"mcp.enabled"', enabled);
  const path = o.path ?? DEFAULT_PATHS.mcp;
  if (typeof path !== 'string' || !path.startsWith('/') || path.endsWith('/') || /[:*?]/.test(path)) {
    problems.push('"mcp.path" must be a string starting with "/", without a trailing "/" or route wildcards');
  } else if (enabled && taken.includes(path)) problems.push(`"mcp.path" "${path}" is already the route of another endpoint`);
  const name = o.name ?? 'nest-jsonrpc';
  const version = o.version ?? '1.0.0';
  for (const [key, value] of [['name', name], ['version', version]] as const) {
    if (typeof value !== 'string' || value.length === 0) problems.push(`"mcp.${key}" must be a non-empty string`);
  }
  problems.boolean('"mcp.exposeAll"', o.exposeAll);
  problems.boolean('"mcp.rest"', o.rest);
  const lists = { include: o.include, exclude: o.exclude, excludePrefixes: o.excludePrefixes };
  for (const [key, value] of Object.entries(lists)) problems.stringList(`"mcp.${key}"`, value);
  const defaultFormat = o.defaultFormat ?? 'json';
  problems.oneOf('"mcp.defaultFormat"', defaultFormat, MCP_FORMAT_NAMES);
  return {
    enabled,
    path,
    name,
    version,
    exposeAll: o.exposeAll ?? false,
    include: [...(o.include ?? [])],
    exclude: [...(o.exclude ?? [])],
    excludePrefixes: [...(o.excludePrefixes ?? [])],
    defaultFormat,
    rest: o.rest ?? false,
    allowedHosts: resolveAllowedHosts(o.allowedHosts, problems),
  };
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
