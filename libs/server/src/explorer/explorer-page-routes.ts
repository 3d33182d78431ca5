import type { Logger } from '@nestjs/common';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { HttpRouteGroup } from '../http/http-edge.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';

/** The built page (`npm run build`: libs/server/explorer -> dist/explorer), shipped in the package. */
const PAGE_FILES = ['index.html', 'explorer.js', 'explorer.css'] as const;

/**
 * Where the built page is: next to this file once compiled (`dist/explorer/`, where the page's
 * build writes it too), or `dist/explorer/` of the package when running from the sources.
 */
export function explorerAssetsDir(): string | undefined {
  const candidates = [new URL('./', import.meta.url), new URL('../../dist/explorer/', import.meta.url)];
  for (const candidate of candidates) {
    const dir = fileURLToPath(candidate);
    if (PAGE_FILES.every((f) => existsSync(dir + f))) return dir;
  }
  return undefined;
}

/**
 * The page's own Content-Security-Policy: nothing but this origin. `'unsafe-eval'` because ajv
 * compiles its validators with `new Function` (the page still works without it; the server
 * validates anyway).
 */
export const EXPLORER_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

interface PageAsset {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * `GET <explorer.path>` (the page) and `GET <explorer.path>/explorer.js|css`, read once at
 * startup from the built files; nothing is fetched from anywhere else. The page's links are
 * rewritten to absolute paths, so it works at any `explorer.path` and reads the document at
 * `openrpc.path` (the page asks for it as the browser's caller: same origin, cookies sent).
 */
export class ExplorerPageRoutes {
  private readonly assets: ReadonlyMap<string, PageAsset>;

  /** The writer of the module's answers, given by `routes()`. */
  private writer: RpcReplyWriter | undefined;

  constructor(
    private readonly options: Pick<ResolvedJsonRpcOptions, 'explorer' | 'openrpc'>,
    private readonly logger: Logger,
    assetsDir: string | undefined = explorerAssetsDir(),
  ) {
    if (!assetsDir) {
      throw new Error('JsonRpcModule: explorer.enabled is set but the explorer page is not built (dist/explorer is missing from @nest-jsonrpc/server): run npm run build');
    }
    const base = options.explorer.path === '/' ? '' : options.explorer.path;
    const read = (file: string) => readFileSync(assetsDir + file);
    this.assets = new Map([
      [options.explorer.path, { body: Buffer.from(pageHtml(read('index.html').toString('utf8'), base, options.openrpc.path)), type: 'text/html; charset=utf-8' }],
      [`${base}/explorer.js`, { body: read('explorer.js'), type: 'text/javascript; charset=utf-8' }],
      [`${base}/explorer.css`, { body: read('explorer.css'), type: 'text/css; charset=utf-8' }],
    ]);
  }

  routes(writer: RpcReplyWriter): HttpRouteGroup {
    this.writer = writer;
    const routes = [...this.assets.keys()].map((path) => ({ method: 'GET' as const, path, handle: (exchange: RpcHttpExchange) => this.handle(exchange) }));
    return { name: 'Explorer request', family: 'rpc', body: 'ignored', routes };
  }

  private handle(exchange: RpcHttpExchange): void {
    const asset = this.assets.get(exchange.route)!;
    this.writer!.sendBody(
      exchange,
      200,
      {
        'content-type': asset.type,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'content-security-policy': EXPLORER_CONTENT_SECURITY_POLICY,
      },
      asset.body,
    );
  }
}

/** The page with its links made absolute: the assets under `base`, the document at `documentPath`. */
export function pageHtml(html: string, base: string, documentPath: string): string {
  const replacements: Array<[string, string]> = [
    ['<meta name="openrpc-document" content="openrpc.json" />', `<meta name="openrpc-document" content="${escapeAttribute(documentPath)}" />`],
    ['href="explorer/explorer.css"', `href="${escapeAttribute(`${base}/explorer.css`)}"`],
    ['src="explorer/explorer.js"', `src="${escapeAttribute(`${base}/explorer.js`)}"`],
  ];
  for (const [from, to] of replacements) {
    if (!html.includes(from)) throw new Error(`JsonRpcModule: the built explorer page has no ${from} to rewrite (rebuild @nest-jsonrpc/server)`);
    html = html.replace(from, to);
  }
  return html;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
