/**
 * The demo's `GET /health` (apps/demo/src/health), on the built demo run as a real process: it
 * reports the durable store (SQLite, with its latency), the shared Redis (not configured in the
 * demo) and readiness; on SIGTERM, with `SHUTDOWN_DRAIN_MS`, it answers 503 with `draining: true`
 * while the process keeps serving, then the process shuts down cleanly. Needs `npm run build` first
 * (`npm test` does it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually } from '../support/async.js';
import { freePort } from '../support/redis-server.js';
import { tempDir } from '../durable/support/durable-fixtures.js';

const demoMain = resolve('apps/demo/dist/main.js');

describe('demo: GET /health', () => {
  const tmp = tempDir();
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    tmp.remove();
  });

  it('reports the stores and readiness, and turns 503 (draining) from the moment SIGTERM arrives', async () => {
    const port = await freePort();
    // The demo keeps its SQLite file under ./data: a temp dir as working directory.
    child = spawn(process.execPath, [demoMain], {
      cwd: tmp.dir,
      env: { ...process.env, PORT: String(port), SHUTDOWN_DRAIN_MS: '3000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child!.once('exit', (code, signal) => done({ code, signal })));
    await eventually(() => output.includes('nest-jsonrpc demo on http://'), 20_000, 'the demo to listen', () => output);
    const url = `http://127.0.0.1:${port}`;
    const health = async () => {
      const res = await fetch(`${url}/health`);
      return { status: res.status, body: (await res.json()) as any };
    };

    const up = await health();
    expect(up.status).toBe(200);
    expect(up.body.status).toBe('ok');
    expect(up.body.info).toEqual({
      durable_store: { status: 'up', kind: 'sqlite', latencyMs: expect.any(Number), detail: './data/durable-streams.sqlite' },
      redis: { status: 'up', enabled: false },
      jsonrpc: { status: 'up', draining: false, runningStreams: 0 },
    });

    const started = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'report.generate', params: { steps: 20, delayMs: 500 }, id: 1 }),
    });
    expect(((await started.json()) as any).result.status).toBe('running');
    expect((await health()).body.info.jsonrpc.runningStreams).toBe(1);

    child.kill('SIGTERM');
    const draining = await eventually(async () => {
      const answer = await health().catch(() => undefined);
      return answer?.status === 503 ? answer : undefined;
    }, 2500, 'a 503 while draining');
    expect(draining.body.status).toBe('shutting_down');
    expect(draining.body.error.jsonrpc).toMatchObject({ status: 'down', draining: true });
    expect(draining.body.info.durable_store.status).toBe('up');
    // Nest's shutdown hooks close the app, then re-raise the signal: the usual end of a clean shutdown.
    expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(output).not.toMatch(/ERROR/);
  }, 60_000);
});
