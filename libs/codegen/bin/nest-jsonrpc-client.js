#!/usr/bin/env node
// The `nest-jsonrpc-client` bin. Committed rather than built: npm links a package's bin when it
// installs the package, and in a fresh clone of the repository that is before dist/ exists.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(`nest-jsonrpc-client: ${cli.pathname} is missing: build the package first (npm run build at the repository root).\n`);
  process.exit(1);
}
const { runCli } = await import(cli.href);
process.exitCode = await runCli(process.argv.slice(2));
