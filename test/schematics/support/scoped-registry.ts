import { createReadStream } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { PackedPackage } from '../../support/workspace-packs.js';

export interface ScopedRegistry {
  /** Registry URL for one scope (`@nest-jsonrpc:registry=<url>`); unique per run, so npm's cache never mixes runs. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The smallest npm registry that lets `nest add @nest-jsonrpc/server` run for real before the
 * packages are published: it serves a packument (the workspace's package.json plus `dist`) and the
 * packed tarball for each of our packages, and nothing else. npm is pointed at it for our scope
 * only; every other package still comes from the public registry. Hand-written because a full
 * registry (verdaccio) would add a large dependency for two static routes.
 */
export async function startScopedRegistry(packages: readonly PackedPackage[]): Promise<ScopedRegistry> {
  const prefix = `/${randomUUID()}`;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${prefix}/`;
  const tarballs = new Map(packages.map((p) => [`${prefix}/-/${basename(p.file)}`, p.file]));
  const packuments = new Map(
    packages.map((p) => [
      `${prefix}/${p.manifest.name.replace('/', '%2f')}`,
      JSON.stringify({
        name: p.manifest.name,
        'dist-tags': { latest: p.manifest.version },
        versions: {
          [p.manifest.version]: {
            ...p.manifest,
            dist: { tarball: `${url}-/${basename(p.file)}`, integrity: p.integrity, shasum: p.shasum },
          },
        },
      }),
    ]),
  );
  server.on('request', (request, response) => {
    const path = (request.url ?? '').replace(/%2F/g, '%2f');
    const tarball = tarballs.get(path);
    if (tarball) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      createReadStream(tarball).pipe(response);
      return;
    }
    const packument = packuments.get(path);
    response.writeHead(packument ? 200 : 404, { 'content-type': 'application/json' });
    response.end(packument ?? '{"error":"not found"}');
  });
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
