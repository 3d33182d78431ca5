import { Controller, Get, Header, NotFoundException, Param } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Serves apps/demo/public/client.html and, under /vendor, the built ESM of @nest-jsonrpc/client
 * and its dependencies (@nest-jsonrpc/protocol, eventsource-parser), so the page can `import { JsonRpcClient } from '@nest-jsonrpc/client'`
 * through an import map — the same package a bundler would give a real front end.
 */
const CLIENT_PAGE = readFileSync(new URL('../../public/client.html', import.meta.url), 'utf8');
const VENDOR_ROOTS: Record<string, string> = {
  client: esmEntryDir('@nest-jsonrpc/client'),
  protocol: esmEntryDir('@nest-jsonrpc/protocol'),
  'eventsource-parser': esmEntryDir('eventsource-parser'),
};

/** The folder of a package's ESM entry, found through its package.json `exports`. */
function esmEntryDir(name: string): string {
  const manifestPath = fileURLToPath(import.meta.resolve(`${name}/package.json`));
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports: { '.': { import: string } } };
  return dirname(join(dirname(manifestPath), manifest.exports['.'].import));
}

@Controller()
export class ClientPageController {
  @Get('client')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-cache')
  page(): string {
    return CLIENT_PAGE;
  }

  @Get('vendor/:pkg/*')
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  vendor(@Param('pkg') pkg: string, @Param() params: Record<string, string | string[] | undefined>): string {
    const root = VENDOR_ROOTS[pkg];
    // The wildcard is `*` on Fastify; Nest names it `path` on Express 5 (a list of segments).
    const path = params['*'] ?? params.path ?? '';
    const relative = normalize(Array.isArray(path) ? path.join('/') : path);
    // Only .js files inside the package's dist folder: no `..` escapes, no source maps needed.
    if (!root || !relative.endsWith('.js') || relative.startsWith('..')) throw new NotFoundException();
    try {
      return readFileSync(join(root, relative), 'utf8');
    } catch {
      throw new NotFoundException();
    }
  }
}
