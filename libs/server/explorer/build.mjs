// Builds the explorer page into libs/server/dist/explorer (run by `npm run build`):
// one ES module bundle (esbuild; ajv and @nest-jsonrpc/client's decoders inside), the page and
// its stylesheet. Nothing is loaded from a CDN at run time.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '../dist/explorer');

await mkdir(out, { recursive: true });
await build({
  entryPoints: [join(here, 'src/main.ts')],
  outfile: join(out, 'explorer.js'),
  tsconfig: join(here, 'tsconfig.json'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
await copyFile(join(here, 'index.html'), join(out, 'index.html'));
await copyFile(join(here, 'explorer.css'), join(out, 'explorer.css'));
