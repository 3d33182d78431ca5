/**
 * The public surfaces of @nest-jsonrpc/server, protocol and client match their checked-in API
 * reports (etc/*.api.md), so a surface changes only on purpose: scripts/api-report.mjs over the
 * built typings (npm test builds first). To change a surface, see docs/api-surface.md.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

it('each package surface is the one its etc/*.api.md report records', () => {
  const check = spawnSync(process.execPath, [join(root, 'scripts/api-report.mjs')], { cwd: root, encoding: 'utf8' });
  // The script prints which report differs, the lines that changed, and how to update on purpose.
  expect(check.stderr).toBe('');
  expect(check.status).toBe(0);
}, 300_000);

it('no report names a type an app cannot import (ae-forgotten-export): each is exported or kept internal', () => {
  const reports = readdirSync(join(root, 'etc')).filter((name) => name.endsWith('.api.md'));
  expect(reports.sort()).toEqual(['client.api.md', 'protocol.api.md', 'server.api.md']);
  const forgotten = reports.flatMap((name) =>
    readFileSync(join(root, 'etc', name), 'utf8')
      .split('\n')
      .filter((line) => line.includes('ae-forgotten-export'))
      .map((line) => `${name}: ${line.trim()}`),
  );
  expect(forgotten).toEqual([]);
});
