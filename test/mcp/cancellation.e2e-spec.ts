/**
 * Cancelling a tool call over HTTP: the SDK clients' `callTool(..., { signal })` aborted (SDK 1.x
 * and SDK 2.x in 2025 mode send `notifications/cancelled` in another POST; SDK 2.x on 2026-07-28
 * closes the call's stream), with and without progress, stops the method: its generator's
 * `finally` runs with `ctx.signal` aborted and no more rows are produced. A raw
 * `notifications/cancelled` cancels only a call of its sender (the same user, or for anonymous
 * callers the same address), an unknown id is accepted and harmless, the cancelled POST ends as
 * an event stream with no response, and nothing stays registered once the calls end.
 */
import { Injectable, Module } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { IsString } from 'class-validator';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { JsonRpcModule, JsonRpcServer, RpcMcp, RpcMethod, RpcStream, type RpcContext } from '@nest-jsonrpc/server';
import type { McpMount } from '../../libs/server/src/mcp/index.js';
import { headerIdentity } from '../security/security-apps.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

class TicksDto {
  @IsString() tag!: string;
}

/** How one run of `ticks` went: rows produced, and how it ended. */
class Run {
  produced = 0;
  /** Resolved by the generator's `finally`. */
  readonly ended: Promise<{ aborted: boolean; reason: unknown }>;
  end!: (how: { aborted: boolean; reason: unknown }) => void;
  private waiters: Array<{ rows: number; resolve: () => void }> = [];

  constructor() {
    this.ended = new Promise((resolve) => (this.end = resolve));
  }

  row(): void {
    this.produced++;
    this.waiters = this.waiters.filter((w) => (w.rows <= this.produced ? (w.resolve(), false) : true));
  }

  /** Resolves once `rows` rows were produced. */
  reached(rows: number): Promise<void> {
    return rows <= this.produced ? Promise.resolve() : new Promise((resolve) => this.waiters.push({ rows, resolve }));
  }
}

@Injectable()
class Ticks {
  private readonly runs = new Map<string, Run>();

  run(tag: string): Run {
    let run = this.runs.get(tag);
    if (!run) this.runs.set(tag, (run = new Run()));
    return run;
  }

  /** One row every 10 ms, forever: only a cancellation (or a disconnect) ends it. */
  @RpcMethod('ticks')
  @RpcStream()
  @RpcMcp({ description: 'Ticks until stopped' })
  async *ticks(p: TicksDto, ctx: RpcContext) {
    const run = this.run(p.tag);
    try {
      for (;;) {
        run.row();
        yield { delta: '.' };
        await delay(10);
      }
    } finally {
      run.end({ aborted: ctx.signal.aborted, reason: ctx.signal.reason });
    }
  }

  @RpcMethod('echo')
  @RpcMcp()
  echo(p: TicksDto) {
    return p.tag;
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, mcp: { enabled: true } })], providers: [Ticks] })
class CancellationModule {}

/** Fails when `promise` takes longer than `ms`: how long a cancellation may take to reach the method. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function mcpPost(t: TestApp, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body), signal });
}

const callTicks = (id: number | string, tag: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ticks', arguments: { tag } } });
const cancelled = (requestId: unknown, reason?: string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, ...(reason !== undefined && { reason }) } });

type Flavour = 'v1' | 'v2 (2025)' | 'v2 (2026-07-28)';

interface CancellableClient {
  call(tag: string, signal: AbortSignal, onprogress?: () => void): Promise<unknown>;
  readonly errors: Error[];
  close(): Promise<void>;
}

async function connect(flavour: Flavour, url: string): Promise<CancellableClient> {
  const endpoint = new URL(url + '/mcp');
  const errors: Error[] = [];
  if (flavour === 'v1') {
    const client = new ClientV1({ name: 'cancel-v1', version: '1.0.0' });
    client.onerror = (error) => errors.push(error);
    await client.connect(new TransportV1(endpoint));
    return {
      call: (tag, signal, onprogress) => client.callTool({ name: 'ticks', arguments: { tag } }, undefined, { signal, ...(onprogress && { onprogress }) }),
      errors,
      close: () => client.close(),
    };
  }
  const client = new ClientV2({ name: 'cancel-v2', version: '2.0.0' }, flavour === 'v2 (2026-07-28)' ? { versionNegotiation: { mode: 'auto' } } : {});
  client.onerror = (error) => errors.push(error);
  await client.connect(new TransportV2(endpoint));
  return {
    call: (tag, signal, onprogress) => client.callTool({ name: 'ticks', arguments: { tag } }, { signal, ...(onprogress && { onprogress }) }),
    errors,
    close: () => client.close(),
  };
}

describe('cancelling an MCP tool call', () => {
  let t: TestApp;
  let ticks: Ticks;
  const inFlight = () => (t.app.get(JsonRpcServer)['mcpMount'] as McpMount).inFlight;
  let tags = 0;
  const newTag = () => `run-${++tags}`;

  beforeAll(async () => {
    t = await startTestApp(CancellationModule, headerIdentity);
    ticks = t.app.get(Ticks);
  });
  afterAll(() => t.close());

  describe.each<Flavour>(['v1', 'v2 (2025)', 'v2 (2026-07-28)'])('from the SDK client %s', (flavour) => {
    it.each([
      ['with progress', true],
      ['without progress', false],
    ])('stops the generator when the call is aborted (%s)', async (_, withProgress) => {
      const client = await connect(flavour, t.url);
      const tag = newTag();
      const run = ticks.run(tag);
      const controller = new AbortController();
      let progress = 0;
      const call = client.call(tag, controller.signal, withProgress ? () => void progress++ : undefined);
      const outcome = call.then(
        () => 'answered',
        () => 'rejected',
      );
      await within(run.reached(3), 5000, 'the first rows');
      if (withProgress) await within((async () => { while (progress < 2) await delay(5); })(), 5000, 'progress');
      controller.abort();
      expect(await outcome).toBe('rejected');
      const ended = await within(run.ended, 2000, "the generator's finally");
      expect(ended.aborted).toBe(true);
      const producedAtEnd = run.produced;
      // Rows stop: the producer ended a few rows after the abort at most (one in flight), and for good.
      expect(producedAtEnd).toBeLessThan(3 + 20);
      expect(inFlight().size).toBe(0);
      await client.close();
      expect(run.produced).toBe(producedAtEnd);
      // The client read the end of the cancelled call without an error: no late response ("unknown
      // message ID"), no broken stream. Progress rows sent before the notification arrived may still
      // reach a client that stopped listening (MCP's race, which it reports and ignores).
      expect(client.errors.filter((e) => !e.message.includes('progress notification for an unknown token'))).toEqual([]);
    });
  });

  it('answers the cancelled POST as an event stream with no response, and aborts ctx.signal with the given reason', async () => {
    const tag = newTag();
    const run = ticks.run(tag);
    const answer = mcpPost(t, callTicks(7, tag));
    await within(run.reached(2), 5000, 'the first rows');
    const notice = await mcpPost(t, cancelled(7, 'user pressed stop'));
    expect(notice.status).toBe(202);
    expect(await within(run.ended, 2000, "the generator's finally")).toEqual({ aborted: true, reason: 'user pressed stop' });
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe('');
    expect(inFlight().size).toBe(0);
  });

  it("never cancels another caller's call: another user, an anonymous caller, the same id as a string", async () => {
    const tag = newTag();
    const run = ticks.run(tag);
    const alice = { 'x-user': 'alice' };
    const answer = mcpPost(t, callTicks(5, tag), alice);
    await within(run.reached(2), 5000, 'the first rows');
    expect(inFlight().size).toBe(1);
    for (const [body, headers] of [
      [cancelled(5), { 'x-user': 'bob' }],
      [cancelled(5), {}],
      [cancelled('5'), alice],
    ] as const) {
      expect((await mcpPost(t, body, headers)).status).toBe(202);
    }
    // Still producing after all three: the rows go on well past where they were.
    const seen = run.produced;
    await within(run.reached(seen + 5), 5000, 'more rows after the foreign cancellations');
    expect(inFlight().size).toBe(1);
    // Its own caller can.
    expect((await mcpPost(t, cancelled(5), alice)).status).toBe(202);
    expect((await within(run.ended, 2000, "the generator's finally")).aborted).toBe(true);
    expect(await (await answer).text()).toBe('');
  });

  it('accepts a cancellation of an unknown id or a malformed one (202) and changes nothing', async () => {
    const tag = newTag();
    const run = ticks.run(tag);
    const answer = mcpPost(t, callTicks(9, tag));
    await within(run.reached(2), 5000, 'the first rows');
    for (const body of [cancelled(999), cancelled(null), cancelled({ id: 9 }), [cancelled(998), cancelled(997)]]) {
      expect((await mcpPost(t, body)).status).toBe(202);
    }
    const seen = run.produced;
    await within(run.reached(seen + 5), 5000, 'more rows after the unknown ids');
    // An anonymous caller cancels its own call (scoped by its address).
    expect((await mcpPost(t, cancelled(9))).status).toBe(202);
    expect((await within(run.ended, 2000, "the generator's finally")).aborted).toBe(true);
    expect(await (await answer).text()).toBe('');
  });

  it('leaves nothing registered once calls end: answered, failed, unknown, cancelled, concurrent with one id', async () => {
    const client = new ClientV1({ name: 'many-calls', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(t.url + '/mcp')));
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) calls.push(mcpPost(t, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { tag: `x${i}` } } }).then((r) => r.json()));
    for (let i = 0; i < 5; i++) calls.push(mcpPost(t, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } }).then((r) => r.json()));
    for (let i = 0; i < 5; i++) calls.push(mcpPost(t, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope' } }).then((r) => r.json()));
    for (let i = 0; i < 5; i++) calls.push(client.callTool({ name: 'echo', arguments: { tag: 'p' } }, undefined, { onprogress: () => undefined }));
    await Promise.all(calls);
    // Two calls in flight with one id in one scope: a cancellation cannot tell them apart and cancels neither.
    const [tagA, tagB] = [newTag(), newTag()];
    const [a, b] = [ticks.run(tagA), ticks.run(tagB)];
    const leave = new AbortController();
    const answers = [tagA, tagB].map((tag) => mcpPost(t, callTicks(4, tag), {}, leave.signal).catch(() => undefined));
    await within(Promise.all([a.reached(2), b.reached(2)]), 5000, 'the first rows');
    expect(inFlight().size).toBe(2);
    expect((await mcpPost(t, cancelled(4))).status).toBe(202);
    await within(Promise.all([a.reached(a.produced + 5), b.reached(b.produced + 5)]), 5000, 'more rows after an ambiguous cancellation');
    // The client's disconnect still stops them; then nothing is left.
    leave.abort();
    await Promise.all(answers);
    await within(Promise.all([a.ended, b.ended]), 2000, 'both generators ended');
    await client.close();
    await within((async () => { while (inFlight().size > 0) await delay(5); })(), 2000, 'an empty registry');
    expect(inFlight().size).toBe(0);
  });
});
