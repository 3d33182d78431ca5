import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { OptionProblems } from './option-checks.js';

/** `info` of the OpenRPC document (OpenRPC 1.3.2 Info Object). */
export interface JsonRpcOpenRpcInfo {
  title: string;
  version: string;
  description?: string;
  termsOfService?: string;
  contact?: { name?: string; email?: string; url?: string };
  license?: { name: string; url?: string };
}

export interface JsonRpcOpenRpcOptions {
  /** Answer `rpc.discover` on `path` and serve `GET <openrpc.path>`. Default false. */
  enabled?: boolean;
  /** Route of the document. Default `/rpc/openrpc.json`. */
  path?: string;
  /** Required when enabled: at least `title` and `version`. */
  info?: JsonRpcOpenRpcInfo;
  /**
   * Absolute URL of the JSON-RPC endpoint written in `servers[0].url` (`https://api.example.com/rpc`).
   * Default: derived from each request (`request.protocol`, `request.host` — Fastify's `trustProxy`
   * decides whether `X-Forwarded-*` count) and `path`.
   */
  serverUrl?: string;
}

export interface JsonRpcExplorerOptions {
  /** Serve the explorer page on `GET <explorer.path>`. Needs `openrpc.enabled`. Default false. */
  enabled?: boolean;
  /** Route of the page; its assets are served under it. Default `/rpc/explorer`. */
  path?: string;
}

export interface ResolvedOpenRpcOptions {
  readonly enabled: boolean;
  readonly path: string;
  /** Empty title and version when disabled. */
  readonly info: Readonly<JsonRpcOpenRpcInfo>;
  readonly serverUrl: string | undefined;
}

export interface ResolvedExplorerOptions {
  readonly enabled: boolean;
  readonly path: string;
}

const OPENRPC_KEYS = ['enabled', 'path', 'info', 'serverUrl'];
const EXPLORER_KEYS = ['enabled', 'path'];
const INFO_KEYS = ['title', 'version', 'description', 'termsOfService', 'contact', 'license'];

/** Static routes: no trailing slash, no Fastify route syntax. */
function staticPath(label: string, value: unknown, problems: OptionProblems): void {
  if (typeof value !== 'string' || !value.startsWith('/') || (value.length > 1 && value.endsWith('/')) || /[:*?#\s]/.test(value)) {
    problems.push(`${label} must be a string starting with "/", without a trailing "/", spaces or route wildcards, got ${JSON.stringify(value)}`);
  }
}

/**
 * Fills the `openrpc` and `explorer` sections; their problems are reported with the others.
 * `taken`: routes the module already serves (`path`, and `stream.path` when enabled), which the
 * document and the page must not shadow.
 */
export function resolveOpenRpcOptions(
  openrpc: JsonRpcOpenRpcOptions | undefined,
  explorer: JsonRpcExplorerOptions | undefined,
  taken: readonly string[],
  problems: OptionProblems,
): { openrpc: ResolvedOpenRpcOptions; explorer: ResolvedExplorerOptions } {
  const o: JsonRpcOpenRpcOptions = problems.object('"openrpc"', openrpc, OPENRPC_KEYS, (key) => `unknown option "openrpc.${key}"`) ? (openrpc ?? {}) : {};
  const e: JsonRpcExplorerOptions = problems.object('"explorer"', explorer, EXPLORER_KEYS, (key) => `unknown option "explorer.${key}"`) ? (explorer ?? {}) : {};
  const enabled = o.enabled ?? false;
  problems.boolean('"openrpc.enabled"', enabled);
  const path = o.path ?? DEFAULT_PATHS.openrpc;
  staticPath('"openrpc.path"', path, problems);
  const info = resolveInfo(o.info, enabled === true, problems);
  problems.string('"openrpc.serverUrl"', o.serverUrl);
  if (typeof o.serverUrl === 'string' && !isHttpUrl(o.serverUrl)) {
    problems.push(`"openrpc.serverUrl" must be an absolute http(s) URL (the OpenRPC meta-schema requires a URI), got ${JSON.stringify(o.serverUrl)}`);
  }

  const explorerEnabled = e.enabled ?? false;
  problems.boolean('"explorer.enabled"', explorerEnabled);
  const explorerPath = e.path ?? DEFAULT_PATHS.explorer;
  staticPath('"explorer.path"', explorerPath, problems);
  // The page only shows what the document says; enabling the document silently would publish it.
  if (explorerEnabled === true && enabled !== true) {
    problems.push('"explorer.enabled" needs the OpenRPC document the page reads: set openrpc: { enabled: true, info: { title, version } } too');
  }
  if (enabled === true && taken.includes(path)) problems.push(`"openrpc.path" (${path}) is already a route of the module`);
  if (explorerEnabled === true) {
    if (taken.includes(explorerPath) || explorerPath === path) problems.push(`"explorer.path" (${explorerPath}) is already a route of the module`);
  }
  return {
    openrpc: { enabled, path, info, serverUrl: o.serverUrl },
    explorer: { enabled: explorerEnabled, path: explorerPath },
  };
}

function resolveInfo(info: JsonRpcOpenRpcInfo | undefined, required: boolean, problems: OptionProblems): JsonRpcOpenRpcInfo {
  if (info === undefined) {
    if (required) problems.push('"openrpc.info" is required when OpenRPC is enabled: { title, version } of your API');
    return { title: '', version: '' };
  }
  if (!problems.object('"openrpc.info"', info, INFO_KEYS, (key) => `unknown option "openrpc.info.${key}"`)) return { title: '', version: '' };
  for (const key of ['title', 'version'] as const) {
    if (typeof info[key] !== 'string' || info[key].length === 0) problems.push(`"openrpc.info.${key}" must be a non-empty string`);
  }
  problems.string('"openrpc.info.description"', info.description);
  problems.string('"openrpc.info.termsOfService"', info.termsOfService);
  if (problems.object('"openrpc.info.contact"', info.contact, ['name', 'email', 'url'], (key) => `unknown option "openrpc.info.contact.${key}"`) && info.contact) {
    for (const key of ['name', 'email', 'url'] as const) problems.string(`"openrpc.info.contact.${key}"`, info.contact[key]);
  }
  if (problems.object('"openrpc.info.license"', info.license, ['name', 'url'], (key) => `unknown option "openrpc.info.license.${key}"`) && info.license) {
    if (typeof info.license.name !== 'string' || info.license.name.length === 0) problems.push('"openrpc.info.license.name" must be a non-empty string');
    problems.string('"openrpc.info.license.url"', info.license.url);
  }
  // A copy: the app's object is never frozen by ours.
  return structuredClone(info);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
