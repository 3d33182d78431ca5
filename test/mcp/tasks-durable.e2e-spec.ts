/**
 * MCP tasks where durable streams are durable: two instances sharing Redis (start on A, poll and
 * cancel through B; the producer on A stops), and a restart on SQLite (a task the old process
 * left running reports `failed` with -32603 `Stream interrupted`). Needs Redis at REDIS_URL:
 * skipped loudly without it, failed when REQUIRE_REDIS=1.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RedisStreamStore, SqliteStreamStore } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { deleteRedisKeys, describeWithRedis, REDIS_URL } from '../support/redis.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { endings, gates, startTasksApp } from './support/mcp-tasks-app.js';
import { mcpRequest, postMcp, TASKS_EXTENSION, type Era } from './support/mcp-wire.js';

const withTasks = { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
const ada = { 'x-user': 'ada' };

function send(app: TestApp, era: Era, method: string, params: Record<string, unknown>, user: Record<string, string> = ada) {
  const request = mcpRequest(era, `${method}-${randomUUID()}`, method, params, era === '2026' ? withTasks : {});
  request.headers = { ...request.headers, ...user };
  return postMcp(app.url + '/mcp', request);
}

/**
 * Starts `jobs.paced` on `on`, lets its first progress row through once the clock has moved past
 * the task's creation, and checks that `read` reports that commit's time as lastUpdatedAt; then
 * cancels the task.
 */
async function lastUpdateFollowsCommits(on: TestApp, read: TestApp): Promise<void> {
  gates.paced.close();
  const created = (await send(on, '2026', 'tools/call', { name: 'jobs.paced', arguments: { steps: 2 } })).body.result;
  try {
    expect(created.lastUpdatedAt).toBe(created.createdAt);
    await eventually(() => gates.paced.waiting === 1, 5000, 'the producer at its gate');
    await eventually(() => Date.now() > Date.parse(created.createdAt), 1000, 'the clock to move on');
    const released = Date.now();
    gates.paced.release();
    const working = await eventually(async () => {
      const task = (await send(read, '2026', 'tasks/get', { taskId: created.taskId })).body.result;
      return task.statusMessage === 'step 1 of 2' ? task : undefined;
    }, 10_000, 'the progress row');
    expect(working.status).toBe('working');
    expect(Date.parse(working.lastUpdatedAt)).toBeGreaterThanOrEqual(released);
  } finally {
    await send(on, '2026', 'tasks/cancel', { taskId: created.taskId });
  }
}

const describeRedis = await describeWithRedis('the MCP tasks across instances');

describeRedis('MCP tasks across two instances sharing Redis', () => {
  const keyPrefix = `test:mcp-tasks:${randomUUID()}:`;
  const storeA = new RedisStreamStore({ url: REDIS_URL, keyPrefix, heartbeatMs: 1000 });
  const storeB = new RedisStreamStore({ url: REDIS_URL, keyPrefix, heartbeatMs: 1000 });
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTasksApp(storeA);
    b = await startTasksApp(storeB);
  });
  afterAll(async () => {
    for (const gate of Object.values(gates)) gate.open();
    await a?.close();
    await b?.close();
    await Promise.all([storeA.close(), storeB.close()]);
    await deleteRedisKeys(keyPrefix);
  });

  it('a task started on A is polled through B to its result', async () => {
    gates.report.close();
    const created = (await send(a, '2026', 'tools/call', { name: 'jobs.report', arguments: { steps: 2, label: 'x1' } })).body.result;
    const working = await eventually(async () => {
      const task = (await send(b, '2026', 'tasks/get', { taskId: created.taskId })).body.result;
      return task.statusMessage === 'step 1 of 2' ? task : undefined;
    }, 10_000, 'B to see the progress');
    expect(working).toMatchObject({ taskId: created.taskId, status: 'working' });
    gates.report.open();
    const done = await eventually(async () => {
      const task = (await send(b, '2026', 'tasks/get', { taskId: created.taskId })).body.result;
      return task.status === 'completed' ? task : undefined;
    }, 10_000, 'B to see the end');
    expect(done.result).toEqual({ content: [{ type: 'text', text: '"part 0 part 1 "' }] });
  });

  it('lastUpdatedAt read through B is the time of the last commit on A', () => lastUpdateFollowsCommits(a, b));

  it('cancelled through B, the producer on A stops; both instances see it cancelled', async () => {
    gates.endless.close();
    const created = (await send(a, '2026', 'tools/call', { name: 'jobs.endless', arguments: { label: 'x2' } })).body.result;
    await eventually(() => gates.endless.waiting === 1, 5000, 'the producer on A to wait');
    expect((await send(b, '2026', 'tasks/cancel', { taskId: created.taskId })).body.result.resultType).toBe('complete');
    await eventually(() => endings.x2 === 'stopped', 10_000, 'the producer on A to stop');
    for (const app of [a, b]) expect((await send(app, '2026', 'tasks/get', { taskId: created.taskId })).body.result.status).toBe('cancelled');
  });

  it('a 2025-era client polls and reads the result through the other instance too', async () => {
    gates.slow.close();
    const task = (await send(b, '2025', 'tools/call', { name: 'jobs.slow', arguments: { label: 'x3' }, task: {} })).body.result.task;
    const result = send(a, '2025', 'tasks/result', { taskId: task.taskId });
    await eventually(() => gates.slow.waiting === 1, 5000, 'the handler on B to wait');
    gates.slow.open();
    expect((await result).body.result).toEqual({
      content: [{ type: 'text', text: '{"label":"x3","done":true}' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
  });
});

describe('MCP tasks across a restart on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-'));
  const filename = join(dir, 'streams.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a task the stopped process was running reports failed, -32603 Stream interrupted, on both eras', async () => {
    gates.endless.close();
    // A store handed in is not closed by the module: it is closed with the app, as the process exiting would.
    const beforeStore = new SqliteStreamStore({ filename });
    const before = await startTasksApp(beforeStore);
    const modern = (await send(before, '2026', 'tools/call', { name: 'jobs.endless', arguments: { label: 'r1' } })).body.result;
    const legacy = (await send(before, '2025', 'tools/call', { name: 'jobs.endless', arguments: { label: 'r2' }, task: {} })).body.result.task;
    await eventually(() => gates.endless.waiting === 2, 5000, 'both producers to wait', () => JSON.stringify({ waiting: gates.endless.waiting, modern, legacy }));
    await before.close();
    await beforeStore.close();

    const after = await startTasksApp(new SqliteStreamStore({ filename }));
    try {
      const task = (await send(after, '2026', 'tasks/get', { taskId: modern.taskId })).body.result;
      expect(task).toMatchObject({ taskId: modern.taskId, status: 'failed', statusMessage: 'Stream interrupted', error: { code: -32603, message: 'Stream interrupted' } });
      expect((await send(after, '2025', 'tasks/get', { taskId: legacy.taskId })).body.result).toMatchObject({ status: 'failed' });
      expect((await send(after, '2025', 'tasks/result', { taskId: legacy.taskId })).body.error).toEqual({ code: -32603, message: 'Stream interrupted' });
      // Ownership survives the restart too.
      expect((await send(after, '2026', 'tasks/get', { taskId: modern.taskId }, { 'x-user': 'bob' })).body.error.code).toBe(-32602);
    } finally {
      await after.close();
    }
  });

  it('a file written before streams kept their last update opens (the column is added); its tasks report lastUpdatedAt', async () => {
    const old = join(dir, 'before-updated-at.db');
    const db = new Database(old);
    // The schema as it was, with a stream its process left running after one progress row.
    db.exec(`
      CREATE TABLE durable_streams (id TEXT PRIMARY KEY, method TEXT NOT NULL, owner TEXT, status TEXT NOT NULL, events INTEGER NOT NULL, created_at INTEGER NOT NULL, completed_at INTEGER);
      CREATE TABLE durable_events (stream_id TEXT NOT NULL, id INTEGER NOT NULL, event TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (stream_id, id)) WITHOUT ROWID;
      CREATE TABLE durable_tombstones (id TEXT PRIMARY KEY, owner TEXT, completed_at INTEGER NOT NULL);
    `);
    const createdAt = Date.now() - 60_000;
    db.prepare("INSERT INTO durable_streams VALUES ('old-task', 'jobs.endless', 'ada', 'running', 1, ?, NULL)").run(createdAt);
    db.prepare("INSERT INTO durable_events VALUES ('old-task', 1, 'progress', '\"started\"')").run();
    db.close();
    const app = await startTasksApp(new SqliteStreamStore({ filename: old }));
    try {
      // Recovered at start: failed, and last updated when it was marked so.
      const recovered = (await send(app, '2026', 'tasks/get', { taskId: 'old-task' })).body.result;
      expect(recovered).toMatchObject({ status: 'failed', createdAt: new Date(createdAt).toISOString() });
      expect(Date.parse(recovered.lastUpdatedAt)).toBeGreaterThan(createdAt);
      await lastUpdateFollowsCommits(app, app);
    } finally {
      await app.close();
    }
  });
});
