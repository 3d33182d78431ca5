import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

  constructor(
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
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
    this.handle = this.handle.bind(this);
  }

  plugin(): FastifyPluginCallback {
    return (instance: FastifyInstance, _opts, done) => {
      for (const url of this.assets.keys()) instance.route({ method: 'GET', url, handler: this.handle });
      done();
    };
  }

  protected handle(request: FastifyRequest, reply: FastifyReply): void {
    const asset = this.assets.get(request.routeOptions.url!)!;
    reply
      .header('content-type', asset.type)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', EXPLORER_CONTENT_SECURITY_POLICY)
      .send(asset.body);
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
