/**
 * `nest-jsonrpc-client generate` against the demo (apps/demo as `npm start` wires it): generate
 * the typed API from the demo's own `GET /rpc/openrpc.json` (with a user's `-H Authorization`,
 * since the document lists what its caller may call), type-check a consumer with tsc (including
 * `@ts-expect-error` on wrong param types, and a control file whose wrong call must fail), then
 * run the consumer against the demo over real HTTP: calls, a stream, a durable stream.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { generateClient, runCli } from '@nest-jsonrpc/codegen';
import { validateOpenRpc } from '../../libs/server/src/openrpc/openrpc-validation.spec-support.js';
import { startDemoApp, type DemoApp } from './support/demo-app.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'node_modules/.bin/nest-jsonrpc-client');

const CONSUMER = `
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { attachDurableStream, createRpcApi, type ChatStreamRow, type MathAddResult, type StatsResult, type SumResult, type UserUpdateResult } from './api.js';

export async function useApi(url: string, authorization: string) {
  const client = new JsonRpcClient({ url: url + '/rpc', headers: { authorization } });
  const api = createRpcApi(client);
  const sum: SumResult = await api.math.add({ a: 2, b: 3 });
  const alias: MathAddResult = sum;
  const difference: number = await api.math.subtract({ minuend: 42, subtrahend: 23 });
  const user: UserUpdateResult = await api.user.update({ id: 7, email: 'ada@example.com', address: { city: 'London' } });
  const stats: StatsResult = await api.admin.stats();
  const stream: AsyncIterable<ChatStreamRow> = api.chat.stream({ prompt: 'hello there', delayMs: 0 });
  const rows: ChatStreamRow[] = [];
  for await (const row of stream) rows.push(row);
  const handle = await api.report.generate({ steps: 3, delayMs: 10 });
  const events: Array<[string, unknown]> = [];
  for await (const event of attachDurableStream(client, handle)) events.push([event.event, event.data]);
  return { sum: alias, difference, user, stats, rows, handle, events };
}

export function typeErrorsOnly(api: ReturnType<typeof createRpcApi>) {
  // @ts-expect-error a is a number
  void api.math.add({ a: '2', b: 3 });
  // @ts-expect-error b is required
  void api.math.add({ a: 2 });
  // @ts-expect-error no such method
  void api.math.multiply({ a: 2, b: 3 });
  // @ts-expect-error the address is an AddressDto
  void api.user.update({ id: 7, email: 'ada@example.com', address: 'London' });
  // @ts-expect-error month is a string
  void api.reports.monthly({ month: 202401 });
}
`;

/** Must not compile: the same wrong call without @ts-expect-error. */
const CONTROL = `
import type { createRpcApi } from './api.js';
export function wrong(api: ReturnType<typeof createRpcApi>) {
  return api.math.add({ a: '2', b: 3 });
}
`;

describe('typed client generator (nest-jsonrpc-client generate)', () => {
  let t: DemoApp;
  let document: any;
  let dir: string;

  beforeAll(async () => {
    t = await startDemoApp();
    document = await (await fetch(`${t.url}/rpc/openrpc.json`, { headers: t.alice })).json();
    dir = await mkdtemp(join(tmpdir(), 'nest-jsonrpc-codegen-'));
    // Every test starts from the same files (each runs alone, in any order): the API generated
    // in-process from the served document, and the consumers that use it.
    await writeFile(join(dir, 'openrpc.json'), JSON.stringify(document));
    const code = await runCli(['generate', join(dir, 'openrpc.json'), '-o', join(dir, 'api.ts')], { out: () => undefined, err: (s) => process.stderr.write(s) });
    if (code !== 0) throw new Error(`generate exited with ${code}`);
    await writeFile(join(dir, 'consumer.ts'), CONSUMER);
    await writeFile(join(dir, 'control.ts'), CONTROL);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the source document is valid OpenRPC', () => {
    expect(validateOpenRpc(document)).toBe(true);
  });

  it('generates from a URL with the built bin, and the same code from a file in-process', async () => {
    // The bin npm linked for the workspace, run as the README runs it (its own shebang and mode).
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm install`);
    const { stdout } = await run(BIN, ['generate', `${t.url}/rpc/openrpc.json`, '-o', join(dir, 'api-from-url.ts'), '-H', `Authorization: ${t.alice.authorization}`]);
    expect(stdout).toBe(`Wrote ${join(dir, 'api-from-url.ts')}: ${document.methods.length} methods\n`);
    expect(document.methods.map((m: { name: string }) => m.name)).toEqual(expect.arrayContaining(['math.add', 'admin.stats', 'chat.stream', 'report.generate']));
    const fromUrl = await readFile(join(dir, 'api-from-url.ts'), 'utf8');
    // beforeAll generated api.ts in-process from the same document, saved to a file.
    const fromFile = await readFile(join(dir, 'api.ts'), 'utf8');
    const body = (text: string) => text.split('\n').slice(2).join('\n');
    expect(body(fromFile)).toBe(body(fromUrl));

    expect(fromUrl).toContain('export interface MathAddParams {\n  a: number;\n  b: number;\n}');
    expect(fromUrl).toContain('export type MathAddResult = SumResult;');
    expect(fromUrl).toContain('export type MathSubtractResult = number;');
    expect(fromUrl).toContain('export interface UserUpdateParams {\n  id: number;\n  email: string;\n  address: AddressDto;\n}');
    expect(fromUrl).toContain('street?: string | null;');
    expect(fromUrl).toContain('export type DemoPingResult = "pong";');
    expect(fromUrl).toMatch(/export type ChatStreamRow =\s+\| \{\s+index: number;\s+delta: string;\s+\}\s+\| \{\s+done: true;/);
    expect(fromUrl).toMatch(/stream: \(params: ChatStreamParams, options\?: StreamCallOptions\): JsonRpcStream<ChatStreamRow> =>\s+client\.stream<ChatStreamRow>\("chat\.stream", asParams\(params\), options\)/);
    expect(fromUrl).toMatch(/generate: \(params\?: ReportGenerateParams, options\?: CallOptions\): Promise<DurableStreamHandle<ReportGenerateRow>> =>/);
    expect(fromUrl).toContain('export type AdminStatsResult = StatsResult;');
    // The summary is a comment, never code.
    expect(fromUrl).toContain(' * Server numbers (admins only)');
  }, 60_000);

  it('type-checks a consumer (with @ts-expect-error on wrong params) and refuses the wrong call without it', async () => {
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true,
          lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: [],
          paths: { '@nest-jsonrpc/client': [join(ROOT, 'libs/client/src/index.ts')] },
        },
        files: ['api.ts', 'consumer.ts', 'control.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir }).then(
      () => ({ code: 0, stdout: '' }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
    const errors = result.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^control\.ts\(4,\d+\): error TS2322: Type 'string' is not assignable to type 'number'\./);
  }, 120_000);

  it('the generated API calls, streams and starts a durable stream against the real server', async () => {
    const consumer = await import(join(dir, 'consumer.ts'));
    const result = await consumer.useApi(t.url, t.alice.authorization);
    expect(result.sum).toEqual({ sum: 5 });
    expect(result.difference).toBe(19);
    expect(result.user).toEqual({ id: 7, email: 'ada@example.com', city: 'London', requestId: expect.any(String) });
    expect(result.stats).toEqual({ uptimeSeconds: expect.any(Number), reportRuns: expect.any(Number) });
    expect(result.rows.at(-1)).toEqual({ done: true, finish_reason: 'stop' });
    expect(result.rows.slice(0, -1).every((row: { index: number; delta: string }, i: number) => row.index === i && typeof row.delta === 'string')).toBe(true);
    expect(result.handle).toEqual({ stream_id: expect.any(String), sse_url: `/rpc/streams/${result.handle.stream_id}`, status: 'running' });
    expect(result.events.map(([event]: [string]) => event)).toEqual(['progress', 'progress', 'progress', 'chunk', 'done']);
    expect(result.events[3][1]).toEqual({ report: expect.stringMatching(/^\/reports\/.+\.pdf$/), pages: 9 });
  }, 30_000);

  it('a wrong param type the types forbid is also refused by the server (-32602)', async () => {
    const client = new JsonRpcClient({ url: `${t.url}/rpc` });
    await expect(client.call('math.add', { a: '2', b: 3 })).rejects.toMatchObject({ code: -32602 });
  });

  it('refuses what is not an OpenRPC document, with a readable error and exit code 1', async () => {
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ openrpc: '1.3.2', info: { title: 'x', version: '1' }, methods: [{ params: [] }] }));
    const err: string[] = [];
    const code = await runCli(['generate', join(dir, 'bad.json'), '-o', join(dir, 'never.ts')], { out: () => {}, err: (s) => err.push(s) });
    expect(code).toBe(1);
    expect(err.join('')).toBe('nest-jsonrpc-client: Not an OpenRPC document: methods[0] has no name\n');
    expect(existsSync(join(dir, 'never.ts'))).toBe(false);
    expect(await runCli(['generate', join(dir, 'bad.json')], { out: () => {}, err: () => {} })).toBe(2);
    await expect(generateClient({ openrpc: '1.3.2', info: { title: 'x', version: '1' }, methods: [], components: { schemas: { A: { $ref: 'https://example.invalid/x.json' } } } })).resolves.toContain('export type A = unknown;');
  });
});
