import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { generateClient } from './generate-client.js';
import { loadOpenRpcDocument } from './load-document.js';

const USAGE = `Usage: nest-jsonrpc-client generate <openrpc.json | url> -o <file.ts> [options]

Writes TypeScript types for every method's params, result and rows, and createRpcApi(client).

Options:
  -o, --out <file.ts>        where to write (required)
  -H, --header <name: value> a header for fetching the document from a URL (repeatable),
                             e.g. -H "Authorization: Bearer <token>"
      --import-from <module> where the generated file imports client types from
                             (default @nest-jsonrpc/client)
  -h, --help                 this text`;

/** Runs the CLI with `argv` (without node and the script); resolves the process exit code. */
export async function runCli(argv: readonly string[], io: { out: (s: string) => void; err: (s: string) => void } = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
}): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        out: { type: 'string', short: 'o' },
        header: { type: 'string', short: 'H', multiple: true },
        'import-from': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(`${USAGE}\n`);
    return 0;
  }
  const [command, source, ...extra] = positionals;
  if (command !== 'generate' || !source || extra.length || !values.out) {
    io.err(`${USAGE}\n`);
    return 2;
  }
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) {
      io.err(`--header must look like "Name: value", got ${JSON.stringify(header)}\n`);
      return 2;
    }
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  try {
    const document = await loadOpenRpcDocument(source, { headers });
    const code = await generateClient(document, { source, importFrom: values['import-from'] });
    await mkdir(dirname(values.out), { recursive: true });
    await writeFile(values.out, code);
    const count = (document as { methods: unknown[] }).methods.length;
    io.out(`Wrote ${values.out}: ${count} method${count === 1 ? '' : 's'}\n`);
    return 0;
  } catch (error) {
    io.err(`nest-jsonrpc-client: ${(error as Error).message}\n`);
    return 1;
  }
}
