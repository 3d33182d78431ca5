/**
 * One process per SQLite file, with real processes (docs/durable.md, "Stores"). An app
 * (support/crash-app.ts) runs in a child process on a SQLite file, producing a durable stream a
 * client is attached to; a second process started on the same file (a second `npm start`, a deploy
 * that overlaps old and new) must fail to start with a clear error, and must not touch the first's
 * streams: before the owner lock it ran startup recovery, wrote -32603 `Stream interrupted` into
 * the first's live stream, and the first's client hung on keep-alives. A process killed with
 * SIGKILL holds no lock: a new one starts on the file at once and recovers its streams.
 * The store's own half is libs/server/src/stream-stores/sqlite-stream-store.spec.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { compileChildApp } from '../durable/support/compile-child.js';
import { tempDir } from '../durable/support/durable-fixtures.js';
import { openSse, type ReceivedEvent } from '../durable/support/sse-client.js';
import { TEST_PLATFORM } from '../support/rpc-test-app.js';

const INTERRUPTED = '{"error":{"code":-32603,"message":"Stream interrupted"}}';
const LEFT_RUNNING = 'left running by a previous process';

interface Child {
  child: ChildProcess;
  /** Everything it wrote so far (Nest logs warnings to stdout, errors to stderr). */
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its URL once it listens; rejects if it exits first. */
  listening: Promise<string>;
}

const tmp = tempDir();
const children = new Set<ChildProcess>();
let entry: string;

beforeAll(() => {
  entry = compileChildApp(tmp.file('child'), 'test/crash/support/crash-app.ts');
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  tmp.remove();
});

function startChild(file: string): Child {
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, RPC_TEST_PLATFORM: TEST_PLATFORM, CRASH_STORE: 'sqlite', CRASH_SQLITE_FILE: file },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /LISTENING (\d+)/.exec(output);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    void exited.then(({ code, signal }) => reject(new Error(`child exited with ${code ?? signal} before listening:\n${output}`)));
  });
  listening.catch(() => undefined);
  return { child, output: () => output, exited, listening };
}

async function call(url: string, method: string, params?: unknown) {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  const body = (await res.json()) as any;
  if (!('result' in body)) throw new Error(JSON.stringify(body));
  return body.result;
}

async function storedHistory(url: string, id: string): Promise<ReceivedEvent[]> {
  const replay = await openSse(`${url}/rpc/streams/${id}`);
  await replay.ended;
  expect(replay.end).toBeDefined();
  return replay.events;
}

/** Rows are `{"n":k}` at id k, ids 1..N without a gap, one terminal event last. */
function expectGenuine(history: ReceivedEvent[], terminal: { event: string; data: string }) {
  const n = history.length;
  expect(history.map((e) => Number(e.id))).toEqual(Array.from({ length: n }, (_, k) => k + 1));
  expect(history.slice(0, -1).filter((e, k) => e.event !== 'chunk' || e.data !== `{"n":${k + 1}}`)).toEqual([]);
  expect(history[n - 1]).toEqual({ id: String(n), ...terminal });
}

describe('one process per SQLite file (child processes)', () => {
  it('a second process on the file fails to start and leaves the first streaming; after a SIGKILL a new one starts at once and recovers', async () => {
    const file = tmp.file('one-process.sqlite');
    const first = startChild(file);
    const firstUrl = await first.listening;
    const { stream_id: id1 } = await call(firstUrl, 'jobs.tick');
    const attached = await openSse(`${firstUrl}/rpc/streams/${id1}`);
    await attached.waitForEvents(5, 20_000);

    // A second `npm start` on the same file: refused at startup, naming the file and the way out.
    const second = startChild(file);
    await expect(second.listening).rejects.toThrow('before listening');
    expect((await second.exited).code).not.toBe(0);
    expect(second.output()).toContain(
      `SqliteStreamStore: ${file} is already open in another process (or in another SqliteStreamStore of this one): one process per file`,
    );
    expect(second.output()).toContain('Give each process its own file, or use RedisStreamStore for several processes serving one API.');
    expect(second.output()).not.toContain(LEFT_RUNNING);

    // The first keeps producing, and its stream ends normally: every row, `done`, then `end`.
    const before = attached.events.length;
    await attached.waitForEvents(before + 10, 20_000);
    expect(await call(firstUrl, 'jobs.release')).toBe(true);
    await attached.ended;
    expect(attached.end).toBeDefined();
    expect(attached.events.map((e) => e.event)).not.toContain('error');
    expectGenuine(attached.events, { event: 'done', data: '{}' });
    expect(await storedHistory(firstUrl, id1)).toEqual(attached.events);

    // A SIGKILL leaves a stream running and no lock: a new process starts on the file at once.
    const { stream_id: id2 } = await call(firstUrl, 'jobs.tick');
    const cut = await openSse(`${firstUrl}/rpc/streams/${id2}`);
    await cut.waitForEvents(5, 20_000);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const third = startChild(file);
    try {
      const thirdUrl = await third.listening;
      expect(third.output()).toContain(`Marked 1 durable stream(s) ${LEFT_RUNNING} as interrupted`);
      const history2 = await storedHistory(thirdUrl, id2);
      expectGenuine(history2, { event: 'error', data: INTERRUPTED });
      expect(history2.slice(0, cut.events.length)).toEqual(cut.events);
      // The stream that completed stays completed.
      expect(await storedHistory(thirdUrl, id1)).toEqual(attached.events);
    } finally {
      third.child.kill('SIGTERM');
      await third.exited;
    }
  }, 90_000);
});
