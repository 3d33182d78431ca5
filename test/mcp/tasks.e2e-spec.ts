/**
 * MCP tasks on durable streams, one instance: the 2026-07-28 Tasks extension (server-directed,
 * `tasks/get` inlines the result, `tasks/cancel` acknowledges) and 2025-11-25 tasks (`task` on
 * `tools/call`, `tasks/get`, blocking `tasks/result`, `tasks/cancel`), status mapping, progress,
 * ownership, the spec's errors — over HTTP, plus the SDK 1.x client's own task flow.
 * Cross-instance (Redis) and restart (SQLite) are in tasks-durable.e2e-spec.ts.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcServer, MemoryStreamStore } from '@nest-jsonrpc/server';
import type { McpMount } from '../../libs/server/src/mcp/index.js';
import { eventually } from '../support/async.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { endings, gates, startTasksApp } from './support/mcp-tasks-app.js';
import { mcpRequest, postMcp, TASKS_EXTENSION, type Era } from './support/mcp-wire.js';

const withTasks = { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
const ada = { 'x-user': 'ada' };
const bob = { 'x-user': 'bob' };
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-tasks', version: '1.0.0' } };

describe('MCP tasks on durable streams', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTasksApp(new MemoryStreamStore());
    url = t.url + '/mcp';
  });
  afterAll(async () => {
    for (const gate of Object.values(gates)) gate.open();
    await t.close();
  });
  beforeEach(() => {
    for (const gate of Object.values(gates)) gate.close();
  });

  /** An MCP request as `user`, with the Tasks extension declared (2026) unless said otherwise. */
  const send = (era: Era, method: string, params: Record<string, unknown>, user: Record<string, string> = ada, declare = true, meta?: Record<string, unknown>) => {
    const request = mcpRequest(era, `${method}-${Math.random()}`, method, params, { ...(era === '2026' && declare && withTasks), meta });
    request.headers = { ...request.headers, ...user };
    return postMcp(url, request);
  };
  const poll = (era: Era, taskId: string, until: (task: any) => boolean, user = ada) =>
    eventually(
      async () => {
        const { body } = await send(era, 'tasks/get', { taskId }, user);
        return until(body.result) ? body.result : undefined;
      },
      10_000,
      `task ${taskId}`,
    );

  describe('2026-07-28: the Tasks extension', () => {
    it('a durable tool called by a client that declared the extension returns a task handle, stored before it answers', async () => {
      const { status, body } = await send('2026', 'tools/call', { name: 'jobs.report', arguments: { steps: 2, label: 'r1' } });
      expect(status).toBe(200);
      const created = body.result;
      expect(created).toEqual({
        resultType: 'task',
        taskId: expect.any(String),
        status: 'working',
        createdAt: expect.stringMatching(ISO),
        lastUpdatedAt: created.createdAt,
        ttlMs: expect.any(Number),
        pollIntervalMs: 50,
        _meta: SERVER_INFO,
      });
      expect(Number.isInteger(created.ttlMs) && created.ttlMs >= 3_600_000).toBe(true);
      // Readable at once (durably created), working, with the last progress row as its message.
      const working = await poll('2026', created.taskId, (task) => task.statusMessage === 'step 1 of 2');
      // lastUpdatedAt moves with the progress row (its own test, below, says how).
      expect(working).toEqual({ ...created, resultType: 'complete', statusMessage: 'step 1 of 2', lastUpdatedAt: expect.stringMatching(ISO), ttlMs: expect.any(Number) });
      gates.report.open();
      const done = await poll('2026', created.taskId, (task) => task.status !== 'working');
      expect(done).toEqual({
        resultType: 'complete',
        taskId: created.taskId,
        status: 'completed',
        createdAt: created.createdAt,
        lastUpdatedAt: expect.stringMatching(ISO),
        ttlMs: expect.any(Number),
        pollIntervalMs: 50,
        // What a direct call of the stream answers: its text deltas, concatenated.
        result: { content: [{ type: 'text', text: '"part 0 part 1 "' }] },
        _meta: SERVER_INFO,
      });
      expect(endings.r1).toBe('finished');
    });

    it('a client that did not declare the extension gets today\'s answer: the durable handle, at once', async () => {
      gates.report.open();
      const { body } = await send('2026', 'tools/call', { name: 'jobs.report', arguments: { steps: 1 } }, ada, false);
      expect(body.result.resultType).toBe('complete');
      expect(JSON.parse(body.result.content[0].text)).toEqual({ stream_id: expect.any(String), sse_url: expect.stringMatching(/^\/rpc\/streams\//), status: 'running' });
    });

    it('a plain method marked task: optional runs in the background as a task; without the extension it answers directly', async () => {
      const { body } = await send('2026', 'tools/call', { name: 'jobs.slow', arguments: { label: 'plain' } });
      expect(body.result).toMatchObject({ resultType: 'task', status: 'working' });
      await eventually(() => gates.slow.waiting === 1, 5000, 'the handler to wait at its gate');
      expect((await send('2026', 'tasks/get', { taskId: body.result.taskId })).body.result.status).toBe('working');
      gates.slow.open();
      const done = await poll('2026', body.result.taskId, (task) => task.status === 'completed');
      expect(done.result).toEqual({ content: [{ type: 'text', text: '{"label":"plain","done":true}' }] });
      const direct = await send('2026', 'tools/call', { name: 'jobs.slow', arguments: { label: 'direct' } }, ada, false);
      expect(direct.body.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: '{"label":"direct","done":true}' }] });
    });

    it('a tool that needs a task refuses a client without the extension: 400, -32021, naming the extension', async () => {
      const { status, body } = await send('2026', 'tools/call', { name: 'jobs.required' }, ada, false);
      expect(status).toBe(400);
      expect(body.error).toEqual({
        code: -32021,
        message: 'Missing required client capabilities: extensions',
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
      const asTask = await send('2026', 'tools/call', { name: 'jobs.required' });
      expect(asTask.body.result.resultType).toBe('task');
    });

    it('a tool that cannot be a task answers directly even to a declaring client (a legacy task hint changes nothing)', async () => {
      const { body } = await send('2026', 'tools/call', { name: 'jobs.quick', task: { ttl: 1000 } });
      expect(body.result).toEqual({ resultType: 'complete', content: [{ type: 'text', text: '"quick"' }], _meta: SERVER_INFO });
    });

    it('the tasks methods need the extension declared on the request: 400, -32021', async () => {
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
        const { status, body } = await send('2026', method, { taskId: 'x', ...(method === 'tasks/update' && { inputResponses: {} }) }, ada, false);
        expect([status, body.error.code]).toEqual([400, -32021]);
      }
    });

    it('a tool error ends the task completed with isError; a server failure ends it failed with the error', async () => {
      const fail = (await send('2026', 'tools/call', { name: 'jobs.fail' })).body.result;
      const ended = await poll('2026', fail.taskId, (task) => task.status !== 'working');
      expect(ended.status).toBe('completed');
      expect(ended).not.toHaveProperty('error');
      expect(ended.result).toEqual({
        content: [{ type: 'text', text: 'Error 4290: Quota exceeded' }],
        isError: true,
        _meta: { 'nest-jsonrpc/error': { code: 4290, message: 'Quota exceeded', data: { quota: 3 } } },
      });
      const crash = (await send('2026', 'tools/call', { name: 'jobs.crash' })).body.result;
      const failed = await poll('2026', crash.taskId, (task) => task.status !== 'working');
      expect(failed).toMatchObject({ status: 'failed', statusMessage: 'Internal error', error: { code: -32603, message: 'Internal error' } });
      expect(failed).not.toHaveProperty('result');
      expect(JSON.stringify(failed)).not.toContain('secret');
    });

    it('tasks/cancel acknowledges, stops the producer, and is idempotent', async () => {
      const created = (await send('2026', 'tools/call', { name: 'jobs.endless', arguments: { label: 'c1' } })).body.result;
      await eventually(() => gates.endless.waiting === 1, 5000, 'the producer to wait');
      for (let i = 0; i < 2; i++) {
        const ack = await send('2026', 'tasks/cancel', { taskId: created.taskId });
        expect([ack.status, ack.body.result]).toEqual([200, { resultType: 'complete', _meta: SERVER_INFO }]);
      }
      expect((await send('2026', 'tasks/get', { taskId: created.taskId })).body.result).toMatchObject({ status: 'cancelled' });
      await eventually(() => endings.c1 === 'stopped', 5000, 'the producer\'s finally');
    });

    it('tasks/update is acknowledged for a task (nothing waits for input) and refused for an unknown one', async () => {
      gates.report.open();
      const created = (await send('2026', 'tools/call', { name: 'jobs.report', arguments: { steps: 1 } })).body.result;
      expect((await send('2026', 'tasks/update', { taskId: created.taskId, inputResponses: { k: { action: 'accept' } } })).body.result).toEqual({ resultType: 'complete', _meta: SERVER_INFO });
      expect((await send('2026', 'tasks/update', { taskId: 'nope', inputResponses: {} })).body.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    });

    it('unknown, another user\'s, a hidden method\'s and a role-denied task do not exist for the caller', async () => {
      gates.report.open();
      const mine = (await send('2026', 'tools/call', { name: 'jobs.report', arguments: { steps: 1 } })).body.result;
      const audit = (await send('2026', 'tools/call', { name: 'jobs.audit' }, { 'x-user': 'ada', 'x-roles': 'auditor' })).body.result;
      const hidden = await t.rpc({ jsonrpc: '2.0', id: 1, method: 'jobs.hidden' }, { headers: ada });
      const notFound = { code: -32602, message: 'Failed to retrieve task: Task not found' };
      for (const [taskId, user] of [['nope', ada], [mine.taskId, bob], [mine.taskId, {}], [audit.taskId, ada], [hidden.body.result.stream_id, ada]] as const) {
        for (const method of ['tasks/get', 'tasks/cancel']) {
          const { status, body } = await send('2026', method, { taskId }, user);
          expect([status, body.error]).toEqual([200, notFound]);
        }
      }
      expect((await send('2026', 'tasks/get', { taskId: mine.taskId })).body.result.taskId).toBe(mine.taskId);
    });

    it('a progress token changes nothing: the call creates its task (JSON, at once), and tasks/get and tasks/cancel answer as without one', async () => {
      const created = await send('2026', 'tools/call', { name: 'jobs.report', arguments: { steps: 2 } }, ada, true, { progressToken: 'pt-2026' });
      expect([created.status, created.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
      expect(created.body.result).toEqual({
        resultType: 'task',
        taskId: expect.any(String),
        status: 'working',
        createdAt: expect.stringMatching(ISO),
        lastUpdatedAt: created.body.result.createdAt,
        ttlMs: expect.any(Number),
        pollIntervalMs: 50,
        _meta: SERVER_INFO,
      });
      const { taskId } = created.body.result;
      await poll('2026', taskId, (task) => task.statusMessage === 'step 1 of 2');
      const plain = await send('2026', 'tasks/get', { taskId });
      const withToken = await send('2026', 'tasks/get', { taskId }, ada, true, { progressToken: 7 });
      // ttlMs counts from now while the task works: the one field that moves between two polls.
      expect([withToken.status, withToken.body.result]).toEqual([200, { ...plain.body.result, ttlMs: expect.any(Number) }]);
      expect(withToken.body.result).toMatchObject({ status: 'working', statusMessage: 'step 1 of 2' });
      const cancelled = await send('2026', 'tasks/cancel', { taskId }, ada, true, { progressToken: 'pt-cancel' });
      expect([cancelled.status, cancelled.body.result]).toEqual([200, { resultType: 'complete', _meta: SERVER_INFO }]);
      // Without the extension, the tasks methods are refused alike.
      expect((await send('2026', 'tasks/get', { taskId }, ada, false, { progressToken: 8 })).status).toBe(400);
    });

    it('tasks/result and tasks/list are not 2026 methods: the SDK answers 404, -32601', async () => {
      for (const method of ['tasks/result', 'tasks/list']) {
        const { status, body } = await send('2026', method, method === 'tasks/result' ? { taskId: 'x' } : {});
        expect([status, body.error.code]).toEqual([404, -32601]);
      }
    });
  });

  describe('2025-11-25: tasks requested with `task`', () => {
    it('tools/list says which tools run as tasks (execution.taskSupport)', async () => {
      const { body } = await send('2025', 'tools/list', {});
      const support = Object.fromEntries(body.result.tools.map((tool: any) => [tool.name, tool.execution?.taskSupport]));
      expect(support).toEqual({
        'jobs.report': 'optional',
        'jobs.endless': 'optional',
        'jobs.paced': 'optional',
        'jobs.slow': 'optional',
        'jobs.required': 'required',
        'jobs.fail': 'optional',
        'jobs.crash': 'optional',
        'jobs.quick': undefined,
      });
    });

    it('tools/call with task creates it; tasks/get reports it; tasks/result waits for the end and answers the result', async () => {
      const { body } = await send('2025', 'tools/call', { name: 'jobs.report', arguments: { steps: 2 }, task: { ttl: 60_000 } });
      const task = body.result.task;
      expect(task).toEqual({ taskId: expect.any(String), status: 'working', createdAt: expect.stringMatching(ISO), lastUpdatedAt: task.createdAt, ttl: expect.any(Number), pollInterval: 50 });
      expect(body.result).not.toHaveProperty('resultType');
      const waiting = send('2025', 'tasks/result', { taskId: task.taskId });
      const got = await poll('2025', task.taskId, (t) => t.statusMessage === 'step 1 of 2');
      expect(got).toEqual({ ...task, statusMessage: 'step 1 of 2', lastUpdatedAt: expect.stringMatching(ISO), ttl: expect.any(Number) });
      gates.report.open();
      const result = await waiting;
      expect(result.body.result).toEqual({ content: [{ type: 'text', text: '"part 0 part 1 "' }], _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } } });
      expect((await send('2025', 'tasks/get', { taskId: task.taskId })).body.result.status).toBe('completed');
    });

    it('with a progress token too: tools/call with task creates it (JSON, at once); tasks/get and tasks/result answer as without one', async () => {
      const created = await send('2025', 'tools/call', { name: 'jobs.report', arguments: { steps: 2 }, task: {} }, ada, true, { progressToken: 'pt-2025' });
      expect([created.status, created.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
      expect(created.body.result).toEqual({
        task: { taskId: expect.any(String), status: 'working', createdAt: expect.stringMatching(ISO), lastUpdatedAt: expect.stringMatching(ISO), ttl: expect.any(Number), pollInterval: 50 },
      });
      const { taskId } = created.body.result.task;
      await poll('2025', taskId, (task) => task.statusMessage === 'step 1 of 2');
      const plain = await send('2025', 'tasks/get', { taskId });
      const withToken = await send('2025', 'tasks/get', { taskId }, ada, true, { progressToken: 'pt-get' });
      expect([withToken.status, withToken.body.result]).toEqual([200, { ...plain.body.result, ttl: expect.any(Number) }]);
      const waiting = send('2025', 'tasks/result', { taskId }, ada, true, { progressToken: 'pt-result' });
      gates.report.open();
      const result = await waiting;
      expect([result.status, result.body.result]).toEqual([200, { content: [{ type: 'text', text: '"part 0 part 1 "' }], _meta: { 'io.modelcontextprotocol/related-task': { taskId } } }]);
      expect(await send('2025', 'tasks/result', { taskId }, ada, true, { progressToken: 9 })).toMatchObject({ body: { result: result.body.result } });
      // The task rules answer the same with a token: -32601 for a task on a tool that cannot be one.
      expect((await send('2025', 'tools/call', { name: 'jobs.quick', task: {} }, ada, true, { progressToken: 'pt-quick' })).body.error).toEqual({ code: -32601, message: 'Tool jobs.quick does not support task-augmented execution' });
    });

    it('notifications/cancelled never touches a task: naming its tools/call does nothing; naming a waiting tasks/result ends only that wait', async () => {
      const as = (request: ReturnType<typeof mcpRequest>) => ({ ...request, headers: { ...request.headers, ...ada } });
      const cancel = (requestId: string) => postMcp(url, as({ headers: mcpRequest('2025', 0, 'x').headers, body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } } }));
      const inFlight = () => (t.app.get(JsonRpcServer)['mcpMount'] as McpMount).inFlight;
      const task = (await postMcp(url, as(mcpRequest('2025', 'start-n1', 'tools/call', { name: 'jobs.endless', arguments: { label: 'n1' }, task: {} })))).body.result.task;
      // A task-augmented request is cancelled with tasks/cancel (MCP 2025-11-25): the notification is accepted and ignored.
      expect((await cancel('start-n1')).status).toBe(202);
      const waiting = postMcp(url, as(mcpRequest('2025', 'wait-n1', 'tasks/result', { taskId: task.taskId })));
      await eventually(() => inFlight().size === 1, 5000, 'tasks/result registered');
      expect((await cancel('wait-n1')).status).toBe(202);
      const answer = await waiting;
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/event-stream');
      expect(answer.body).toBeUndefined();
      expect(inFlight().size).toBe(0);
      expect((await send('2025', 'tasks/get', { taskId: task.taskId })).body.result.status).toBe('working');
      expect(endings.n1).toBeUndefined();
      expect((await send('2025', 'tasks/cancel', { taskId: task.taskId })).body.result.status).toBe('cancelled');
    });

    it('the spec\'s -32601 for a task on a tool that cannot be one, and for a required task not asked for', async () => {
      expect((await send('2025', 'tools/call', { name: 'jobs.quick', task: {} })).body.error).toEqual({ code: -32601, message: 'Tool jobs.quick does not support task-augmented execution' });
      expect((await send('2025', 'tools/call', { name: 'jobs.required' })).body.error).toEqual({ code: -32601, message: 'Tool jobs.required must be called as a task' });
    });

    it('tasks/cancel answers the cancelled task; cancelling it again is refused (2025-11-25: terminal)', async () => {
      const task = (await send('2025', 'tools/call', { name: 'jobs.endless', arguments: { label: 'c2' }, task: {} })).body.result.task;
      const cancelled = await send('2025', 'tasks/cancel', { taskId: task.taskId });
      expect(cancelled.body.result).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
      expect((await send('2025', 'tasks/cancel', { taskId: task.taskId })).body.error).toEqual({ code: -32602, message: "Cannot cancel task: already in terminal status 'cancelled'" });
      expect((await send('2025', 'tasks/result', { taskId: task.taskId })).body.error).toEqual({ code: -32602, message: 'Task was cancelled: it has no result' });
    });

    it('a tool error is a completed task whose result is the isError result', async () => {
      const task = (await send('2025', 'tools/call', { name: 'jobs.fail', task: {} })).body.result.task;
      const result = await send('2025', 'tasks/result', { taskId: task.taskId });
      expect(result.body.result).toMatchObject({ content: [{ type: 'text', text: 'Error 4290: Quota exceeded' }], isError: true });
      expect((await send('2025', 'tasks/get', { taskId: task.taskId })).body.result.status).toBe('completed');
    });

    it('tasks/result of a failed task is its JSON-RPC error; of another user\'s task, not found', async () => {
      const task = (await send('2025', 'tools/call', { name: 'jobs.crash', task: {} })).body.result.task;
      expect((await send('2025', 'tasks/result', { taskId: task.taskId })).body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect((await send('2025', 'tasks/result', { taskId: task.taskId }, bob)).body.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    });

    it('the SDK 1.x client runs a tool as a task end to end (callToolStream: created, status, result)', async () => {
      const client = new ClientV1({ name: 'v1', version: '1.0.0' });
      await client.connect(new TransportV1(new URL(url), { requestInit: { headers: ada } }));
      await client.listTools();
      gates.report.open();
      const seen: string[] = [];
      let result: any;
      for await (const message of client.experimental.tasks.callToolStream({ name: 'jobs.report', arguments: { steps: 3 } }, CallToolResultSchema, { task: { ttl: 60_000 } })) {
        seen.push(message.type);
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(seen.at(-1)).toBe('result');
      expect(result.content).toEqual([{ type: 'text', text: '"part 0 part 1 part 2 "' }]);
      await client.close();
    });

    it('the SDK 1.x client runs a tool as a task with onprogress too: the task is created and ends with the tool\'s result', async () => {
      const client = new ClientV1({ name: 'v1', version: '1.0.0' });
      await client.connect(new TransportV1(new URL(url), { requestInit: { headers: ada } }));
      await client.listTools();
      gates.report.open();
      const seen: string[] = [];
      let result: any;
      const stream = client.experimental.tasks.callToolStream({ name: 'jobs.report', arguments: { steps: 3 } }, CallToolResultSchema, { task: { ttl: 60_000 }, onprogress: () => undefined });
      for await (const message of stream) {
        seen.push(message.type);
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(seen.at(-1)).toBe('result');
      expect(result.content).toEqual([{ type: 'text', text: '"part 0 part 1 part 2 "' }]);
      await client.close();
    });
  });

  describe('lastUpdatedAt: when the task last changed', () => {
    /** Lets `jobs.paced` through its three steps, checking lastUpdatedAt after each, then once it completed. */
    const stepThrough = async (era: Era, created: { taskId: string; createdAt: string }) => {
      let last = Date.parse(created.createdAt);
      for (const step of [1, 2]) {
        await eventually(() => gates.paced.waiting === 1, 5000, `the producer at its gate before step ${step}`);
        // Timestamps have ms precision: the clock moves past the last update, so the next is visibly later.
        await eventually(() => Date.now() > last, 1000, 'the clock to move on');
        const released = Date.now();
        gates.paced.release();
        const task = await poll(era, created.taskId, (t) => t.statusMessage === `step ${step} of 3`);
        const updated = Date.parse(task.lastUpdatedAt);
        expect([task.status, task.createdAt]).toEqual(['working', created.createdAt]);
        expect(task.lastUpdatedAt).toMatch(ISO);
        expect(updated).toBeGreaterThanOrEqual(released);
        expect(updated).toBeLessThanOrEqual(Date.now());
        last = updated;
      }
      await eventually(() => gates.paced.waiting === 1, 5000, 'the producer at its gate before step 3');
      gates.paced.release();
      const done = await poll(era, created.taskId, (t) => t.status !== 'working');
      expect(done.status).toBe('completed');
      // The completion time, as the durable routes report it.
      const { streams } = (await (await fetch(`${t.url}/rpc/streams`, { headers: ada })).json()) as { streams: Array<{ stream_id: string; completed_at: string }> };
      const stream = streams.find((s) => s.stream_id === created.taskId);
      expect(stream?.completed_at).toMatch(ISO);
      expect(done.lastUpdatedAt).toBe(stream?.completed_at);
      expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThanOrEqual(last);
    };

    it.each(['2026', '2025'] as const)('%s: each progress row moves it on while the task works; once it ends, it is the completion time', async (era) => {
      const answer = (await send(era, 'tools/call', { name: 'jobs.paced', arguments: { steps: 3 }, ...(era === '2025' && { task: {} }) })).body.result;
      const created = era === '2025' ? answer.task : answer;
      try {
        // The producer waits at its gate before its first row: nothing is committed yet.
        expect(created.lastUpdatedAt).toBe(created.createdAt);
        await stepThrough(era, created);
      } finally {
        // A failed expectation must not leave the producer at the gate the next test shares.
        await send(era, 'tasks/cancel', { taskId: created.taskId });
      }
    });
  });

  describe('past retention', () => {
    let short: TestApp;
    beforeAll(async () => {
      short = await startTasksApp(new MemoryStreamStore(), { durable: { enabled: true, retention: 1 } });
    });
    afterAll(() => short.close());

    it('the owner reads "Task has expired"; anyone else still "Task not found"', async () => {
      gates.report.open();
      const request = (method: string, params: Record<string, unknown>, user: Record<string, string>) => {
        const r = mcpRequest('2026', method, method, params, withTasks);
        r.headers = { ...r.headers, ...user };
        return postMcp(short.url + '/mcp', r);
      };
      const created = (await request('tools/call', { name: 'jobs.report', arguments: { steps: 1 } }, ada)).body.result;
      // Retention counts from the end: the task reads as completed, then (after 1 s) as expired.
      const expired = await eventually(async () => {
        const { body } = await request('tasks/get', { taskId: created.taskId }, ada);
        return body.error?.message === 'Failed to retrieve task: Task has expired' ? body.error : undefined;
      }, 10_000, 'the task to expire');
      expect(expired).toEqual({ code: -32602, message: 'Failed to retrieve task: Task has expired' });
      expect((await request('tasks/get', { taskId: created.taskId }, bob)).body.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    });
  });
});
