/**
 * `nest-jsonrpc-client generate`: from a realistic OpenRPC document (built with the server's
 * builders for a real app), generate the typed API, type-check a consumer with tsc (including a
 * `@ts-expect-error` on a wrong param type, and a control file whose wrong call must fail), then
 * run the consumer against the app over real HTTP: a call, a stream, a durable stream.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { generateClient, runCli } from '../../libs/client/src/codegen/index.js';
import { validateOpenRpc } from '../../libs/server/src/openrpc/openrpc-validation.spec-support.js';
import { startDescribeApp } from './support/describe-app.js';
import type { TestApp } from '../support/rpc-test-app.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'libs/client/dist/codegen/bin.js');

const CONSUMER = `
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { attachDurableStream, createRpcApi, type ChatStreamRow, type MathAddResult, type SumResult, type UserCreateResult } from './api.js';

export async function useApi(url: string) {
  const client = new JsonRpcClient({ url: url + '/rpc' });
  const api = createRpcApi(client);
  const sum: SumResult = await api.math.add({ a: 2, b: 3 });
  const alias: MathAddResult = sum;
  const difference: number = await api.math.subtract({ minuend: 42, subtrahend: 23 });
  const user: UserCreateResult = await api.user.create({
    name: 'Ada', email: 'ada@example.com', age: 36, role: 'editor', address: { city: 'London', zip: null },
  });
  const stream: AsyncIterable<ChatStreamRow> = api.chat.stream({ prompt: 'one two three', delayMs: 20 });
  const rows: ChatStreamRow[] = [];
  for await (const row of stream) rows.push(row);
  const handle = await api.report.generate({ steps: 3, delayMs: 10 });
  const events: Array<[string, unknown]> = [];
  for await (const event of attachDurableStream(client, handle)) events.push([event.event, event.data]);
  return { sum: alias, difference, user, rows, handle, events };
}

export function typeErrorsOnly(api: ReturnType<typeof createRpcApi>) {
  // @ts-expect-error a is a number
  void api.math.add({ a: '2', b: 3 });
  // @ts-expect-error b is required
  void api.math.add({ a: 2 });
  // @ts-expect-error no such method
  void api.math.multiply({ a: 2, b: 3 });
  // @ts-expect-error role is 'reader' | 'editor'
  void api.user.create({ name: 'Ada', email: 'a@b.co', age: 36, role: 'root', address: { city: 'London' } });
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
  let t: TestApp & { document: () => any };
  let dir: string;

  beforeAll(async () => {
    t = await startDescribeApp();
    dir = await mkdtemp(join(tmpdir(), 'nest-jsonrpc-codegen-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the source document is valid OpenRPC', () => {
    expect(validateOpenRpc(t.document())).toBe(true);
  });

  it('generates from a URL with the built bin, and the same code from a file in-process', async () => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
    const { stdout } = await run(process.execPath, [BIN, 'generate', `${t.url}/rpc/openrpc.json`, '-o', join(dir, 'api.ts')]);
    expect(stdout).toBe(`Wrote ${join(dir, 'api.ts')}: 8 methods\n`);
    const fromUrl = await readFile(join(dir, 'api.ts'), 'utf8');

    await writeFile(join(dir, 'openrpc.json'), JSON.stringify(t.document()));
    const out: string[] = [];
    const code = await runCli(['generate', join(dir, 'openrpc.json'), '-o', join(dir, 'api-from-file.ts')], { out: (s) => out.push(s), err: (s) => out.push(s) });
    expect(code).toBe(0);
    const fromFile = await readFile(join(dir, 'api-from-file.ts'), 'utf8');
    const body = (text: string) => text.split('\n').slice(2).join('\n');
    expect(body(fromFile)).toBe(body(fromUrl));

    expect(fromUrl).toContain('export interface MathAddParams {\n  a: number;\n  b: number;\n}');
    expect(fromUrl).toContain('export type MathAddResult = SumResult;');
    expect(fromUrl).toContain('export type MathSubtractResult = number;');
    expect(fromUrl).toContain('role: "reader" | "editor";');
    expect(fromUrl).toContain('zip?: string | null;');
    expect(fromUrl).toContain('export type ChatStreamRow = ChatRow;');
    expect(fromUrl).toMatch(/stream: \(params: ChatStreamParams, options\?: StreamCallOptions\): JsonRpcStream<ChatStreamRow> =>\s+client\.stream<ChatStreamRow>\("chat\.stream", asParams\(params\), options\)/);
    expect(fromUrl).toMatch(/generate: \(params: ReportGenerateParams, options\?: CallOptions\): Promise<DurableStreamHandle<ReportGenerateRow>> =>/);
    // The hostile description is inside a comment, never code.
    expect(fromUrl).toContain(' * Answers <img src=x onerror="window.__xss=1"><b>bold?</b> too.');
  }, 60_000);

  it('type-checks a consumer (with @ts-expect-error on wrong params) and refuses the wrong call without it', async () => {
    await writeFile(join(dir, 'consumer.ts'), CONSUMER);
    await writeFile(join(dir, 'control.ts'), CONTROL);
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
    const result = await consumer.useApi(t.url);
    expect(result.sum).toEqual({ sum: 5 });
    expect(result.difference).toBe(19);
    expect(result.user).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Ada', email: 'ada@example.com' });
    expect(result.rows).toEqual([{ index: 0, delta: 'one' }, { index: 1, delta: 'two' }, { index: 2, delta: 'three' }]);
    expect(result.handle).toEqual({ stream_id: expect.any(String), sse_url: `/rpc/streams/${result.handle.stream_id}`, status: 'running' });
    expect(result.events).toEqual([
      ['progress', { percent: 33, step: 1 }],
      ['progress', { percent: 67, step: 2 }],
      ['progress', { percent: 100, step: 3 }],
      ['chunk', { report: '/reports/1.pdf', pages: 6 }],
      ['done', {}],
    ]);
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
