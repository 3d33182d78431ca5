import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import { check, type OptionProblems } from './option-checks.js';
import { OptionSection } from './option-section.js';

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
  /** Route of the document. Default `<path>/openrpc.json` (`/rpc/openrpc.json`). */
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
  /** Route of the page; its assets are served under it. Default `<path>/explorer` (`/rpc/explorer`). */
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

const unknownKey = (path: string) => `unknown option "${path}"`;

const contactSection = new OptionSection<NonNullable<JsonRpcOpenRpcInfo['contact']>, NonNullable<JsonRpcOpenRpcInfo['contact']>>('openrpc.info.contact', {
  name: { check: check.string, doc: 'a name to contact' },
  email: { check: check.string, doc: 'an email address' },
  url: { check: check.string, doc: 'a URL' },
});

const licenseSection = new OptionSection<NonNullable<JsonRpcOpenRpcInfo['license']>, NonNullable<JsonRpcOpenRpcInfo['license']>>('openrpc.info.license', {
  name: { required: true, check: check.nonEmptyString, doc: 'the license name' },
  url: { check: check.string, doc: 'its URL' },
});

/** `openrpc.info`: a copy, so the app's object is never frozen by ours. */
const infoSection = new OptionSection<JsonRpcOpenRpcInfo, JsonRpcOpenRpcInfo>(
  'openrpc.info',
  {
    title: { required: true, check: check.nonEmptyString, doc: 'the API title' },
    version: { required: true, check: check.nonEmptyString, doc: 'the API version' },
    description: { check: check.string, doc: 'a description' },
    termsOfService: { check: check.string, doc: 'the terms of service' },
    contact: { resolve: (contact, _label, problems) => (contact === undefined ? undefined : contactSection.read(contact, problems)), doc: '`{ name?, email?, url? }`' },
    license: { resolve: (license, _label, problems) => (license === undefined ? undefined : licenseSection.read(license, problems)), doc: '`{ name, url? }`' },
  },
  unknownKey,
);

/** The `openrpc` section. */
export const openRpcSection = new OptionSection<JsonRpcOpenRpcOptions, ResolvedOpenRpcOptions>('openrpc', {
  enabled: { default: false, check: check.boolean, doc: '`rpc.discover` on `path` and the document\'s GET route ([docs/openrpc.md](docs/openrpc.md))' },
  path: { default: DEFAULT_PATHS.openrpc, belowPath: '/openrpc.json', check: check.routePath, doc: 'route of the document' },
  info: {
    resolve: (info, _label, problems) => resolveInfo(info as JsonRpcOpenRpcInfo | undefined, problems),
    shown: '— (required when enabled)',
    doc: '`{ title, version, description?, termsOfService?, contact?, license? }`',
  },
  serverUrl: {
    check: (problems, label, value) => {
      problems.string(label, value);
      if (typeof value === 'string' && !isHttpUrl(value)) {
        problems.push(`${label} must be an absolute http(s) URL (the OpenRPC meta-schema requires a URI), got ${JSON.stringify(value)}`);
      }
    },
    shown: 'from the request',
    doc: 'absolute URL written in `servers[0].url`',
  },
});

/** The `explorer` section. */
export const explorerSection = new OptionSection<JsonRpcExplorerOptions, ResolvedExplorerOptions>('explorer', {
  enabled: { default: false, check: check.boolean, doc: 'the explorer page (needs `openrpc.enabled`)' },
  path: { default: DEFAULT_PATHS.explorer, belowPath: '/explorer', check: check.routePath, doc: 'route of the page; its assets are served under it' },
});

/**
 * What the `openrpc` and `explorer` sections say together (each resolved by its table):
 * `taken` are routes the module already serves (`path`, and `stream.path` when enabled), which
 * the document and the page must not shadow. `infoGiven`: whether the app wrote `openrpc.info`.
 */
export function checkOpenRpcRoutes(openrpc: ResolvedOpenRpcOptions, infoGiven: boolean, explorer: ResolvedExplorerOptions, taken: readonly string[], problems: OptionProblems): void {
  if (openrpc.enabled === true && !infoGiven) problems.push('"openrpc.info" is required when OpenRPC is enabled: { title, version } of your API');
  // The page only shows what the document says; enabling the document silently would publish it.
  if (explorer.enabled === true && openrpc.enabled !== true) {
    problems.push('"explorer.enabled" needs the OpenRPC document the page reads: set openrpc: { enabled: true, info: { title, version } } too');
  }
  if (openrpc.enabled === true && taken.includes(openrpc.path)) problems.push(`"openrpc.path" (${openrpc.path}) is already a route of the module`);
  if (explorer.enabled === true) {
    if (taken.includes(explorer.path) || explorer.path === openrpc.path) problems.push(`"explorer.path" (${explorer.path}) is already a route of the module`);
  }
}

function resolveInfo(info: JsonRpcOpenRpcInfo | undefined, problems: OptionProblems): JsonRpcOpenRpcInfo {
  if (info === undefined || !infoSection.checkKeys(info, problems)) return { title: '', version: '' };
  return infoSection.resolve(info, problems);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
