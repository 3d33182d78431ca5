/**
 * The public surfaces of @nest-jsonrpc/server, protocol and client match their checked-in API
 * reports (etc/*.api.md), so a surface changes only on purpose: scripts/api-report.mjs over the
 * built typings (npm test builds first). To change a surface, see docs/api-surface.md.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

it('each package surface is the one its etc/*.api.md report records', () => {
  const check = spawnSync(process.execPath, [join(root, 'scripts/api-report.mjs')], { cwd: root, encoding: 'utf8' });
  // The script prints which report differs, the lines that changed, and how to update on purpose.
  expect(check.stderr).toBe('');
  expect(check.status).toBe(0);
}, 300_000);
