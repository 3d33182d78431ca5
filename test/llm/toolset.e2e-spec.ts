/**
 * RpcToolset over real HTTP: the app's own methods as LLM tools, each call run through the whole
 * pipeline as the caller of the RPC call that made the tools (`transport: 'tool'`). Roles (the
 * handler never runs on a denial), rate limits shared with /rpc, the cache, validation (-32602
 * reaches the model as text), internal errors (cause logged, never shown), the name mapping, stream
 * methods collected as rows; and the tool loop across two model turns through /rpc/stream, with
 * the fake provider standing in for OpenAI.
 */
import { Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { IsNotEmpty, IsString } from 'class-validator';
import { openAiChat, runToolLoop, toStreamRows } from '@nest-jsonrpc/llm';
import {
  JsonRpcModule,
  RpcCache,
  RpcMethod,
  RpcParams,
  RpcRateLimit,
  RpcStream,
  RpcToolError,
  RpcToolset,
  rpcToolName,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { openStream } from '../streaming/stream-client.js';
import { startFakeProvider, type FakeProvider } from './support/fake-provider.js';

class CityDto {
  @IsString()
  @IsNotEmpty()
  city!: string;
}

/** `x-user: alice:admin,user` sets request.user (as an auth guard would); no header: anonymous. */
@Injectable()
class HeaderUserGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const header = request.headers['x-user'] as string | undefined;
    if (header) {
      const [id, roles = ''] = header.split(':');
      request.user = { id, roles: roles.split(',').filter(Boolean) };
    }
    return true;
  }
}

const calls = { weather: 0, secret: 0, cached: 0 };

/** What `slow.wait` saw: when it started, and when its signal aborted. */
const slow: { started?: () => void; aborted?: (at: number) => void } = {};

@Injectable()
class ToolMethods {
  @RpcMethod('weather.get', { description: 'Current weather of a city.' })
  weather(@RpcParams() p: CityDto) {
    calls.weather++;
    return { city: p.city, temperatureC: 21 };
  }

  @RpcMethod('weather_get', { summary: 'Collides with weather.get as a tool name.' })
  weatherUnderscore() {
    return 'other';
  }

  @RpcMethod('secret.read', { roles: ['admin'], description: 'Admins only.' })
  secret(_p: unknown, ctx: RpcContext) {
    calls.secret++;
    return { secret: 42, transport: ctx.transport, user: ctx.user?.id };
  }

  @RpcMethod('quota.take')
  @RpcRateLimit({ limit: 2, interval: 60, scope: 'ip' })
  quota() {
    return 'taken';
  }

  @RpcMethod('report.cached')
  @RpcCache({ ttl: 60 })
  cached() {
    return { run: ++calls.cached };
  }

  @RpcMethod('fail.hard')
  fail(): never {
    throw new Error('db password is hunter2');
  }

  @RpcMethod('slow.wait')
  async slowWait(_p: unknown, ctx: RpcContext) {
    slow.started?.();
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    slow.aborted?.(performance.now());
  }

  @RpcMethod('ticks.count')
  @RpcStream()
  async *ticks(p: { n: number }) {
    for (let i = 0; i < p.n; i++) yield { i };
  }
}

let providerUrl = '';

/** What the tests drive: the toolset as an RPC handler would use it. */
@Injectable()
class ToolDriver {
  constructor(private readonly toolset: RpcToolset) {}

  /** Lists the tools of `methods`; with `call`, runs the tool named `call.name` (the model's name). */
  @RpcMethod('probe.tools')
  async probe(p: { methods: string[]; call?: { name: string; arguments?: unknown }; maxStreamRows?: number }, ctx: RpcContext) {
    const tools = this.toolset.tools(p.methods, ctx, { maxStreamRows: p.maxStreamRows });
    const listed = tools.map(({ name, method, description, parameters }) => ({ name, method, description, parameters }));
    if (!p.call) return { tools: listed };
    const tool = tools.find((t) => t.name === p.call!.name)!;
    try {
      return { tools: listed, outcome: { result: await tool.execute(p.call.arguments, { toolCallId: 'call_1' }) } };
    } catch (error) {
      return { tools: listed, outcome: { error: (error as Error).message, code: (error as RpcToolError).error.code, isToolError: error instanceof RpcToolError } };
    }
  }

  /** The tool loop against the fake provider (OpenAI chat), rows as NDJSON. */
  @RpcMethod('agent.run')
  @RpcStream()
  run(p: { question: string; tools?: string[] }, ctx: RpcContext) {
    const tools = this.toolset.tools(p.tools ?? ['weather.get', 'secret.read'], ctx);
    const provider = openAiChat({ apiKey: 'sk-test', baseUrl: `${providerUrl}/v1` });
    return toStreamRows(runToolLoop({ provider, request: { model: 'gpt-test', messages: [{ role: 'user', content: p.question }] }, tools, maxTurns: 3, signal: ctx.signal }));
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],
  providers: [ToolMethods, ToolDriver, { provide: APP_GUARD, useClass: HeaderUserGuard }],
})
class ToolsetModule {}

const admin = { 'x-user': 'alice:admin' };
const nobody = { 'x-user': 'bob:user' };

/** An OpenAI chat completion stream (the shape the recorded fixtures have), `[DONE]` last. */
function openAiStream(deltas: Array<Record<string, unknown>>, finishReason: string, usage: Record<string, number>): Buffer {
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ id: 'chatcmpl-t', object: 'chat.completion.chunk', model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [chunk({ role: 'assistant', content: null }, null), ...deltas.map((d) => chunk(d, null)), chunk({}, finishReason), { id: 'chatcmpl-t', object: 'chat.completion.chunk', choices: [], usage }];
  return Buffer.from(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n');
}

/** A first turn calling `calls` (each call's arguments streamed in two fragments). */
function toolTurn(calls: Array<{ name: string; args: unknown }>): Buffer {
  const deltas = calls.flatMap(({ name, args }, index) => {
    const json = JSON.stringify(args);
    return [
      { tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name, arguments: json.slice(0, 5) } }] },
      { tool_calls: [{ index, function: { arguments: json.slice(5) } }] },
    ];
  });
  return openAiStream(deltas, 'tool_calls', { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 });
}

const answerTurn = (words: string[]) => openAiStream(words.map((content) => ({ content })), 'stop', { prompt_tokens: 90, completion_tokens: words.length, total_tokens: 90 + words.length });

const ndjson = (text: string) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line));

describe('RpcToolset over real HTTP', () => {
  let t: TestApp;
  let fake: FakeProvider;

  beforeAll(async () => {
    fake = await startFakeProvider();
    providerUrl = fake.url;
    t = await startTestApp(ToolsetModule);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  const probe = async (params: Record<string, unknown>, headers: Record<string, string> = admin) => {
    const { body } = await t.rpc({ jsonrpc: '2.0', method: 'probe.tools', params, id: 1 }, { headers });
    expect(body.error).toBeUndefined();
    return body.result;
  };

  describe('tools(): definitions from the method schemas', () => {
    it('names made safe (weather.get -> weather_get), description from the method, params schema with an object root', async () => {
      const { tools } = await probe({ methods: ['weather.get', 'secret.read', 'ticks.count'] });
      expect(tools).toEqual([
        {
          name: 'weather_get',
          method: 'weather.get',
          description: 'Current weather of a city.',
          parameters: { type: 'object', properties: { city: { type: 'string', not: { enum: ['', null] } } }, required: ['city'], additionalProperties: false },
        },
        { name: 'secret_read', method: 'secret.read', description: 'Admins only.', parameters: { type: 'object', properties: {} } },
        { name: 'ticks_count', method: 'ticks.count', description: 'Calls the JSON-RPC method "ticks.count".', parameters: { type: 'object', properties: {} } },
      ]);
      for (const tool of tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    });

    it('fails at tools() time for unknown methods, colliding tool names and over-long names, with a clear error', () => {
      const toolset = t.app.get(RpcToolset);
      const ctx = {} as RpcContext;
      expect(() => toolset.tools(['weather.get', 'nope.one', 'nope.two'], ctx)).toThrow('RpcToolset: no such method: "nope.one", "nope.two"');
      expect(() => toolset.tools(['weather.get', 'weather_get'], ctx)).toThrow('RpcToolset: methods "weather.get" and "weather_get" both become the tool name "weather_get"');
      expect(() => rpcToolName('x'.repeat(65))).toThrow('must match');
      expect(rpcToolName('ns.sub-name.v2')).toBe('ns_sub-name_v2');
      // The same method twice is one tool.
      expect(toolset.tools(['weather.get', 'weather.get'], ctx).map((tool) => tool.name)).toEqual(['weather_get']);
    });
  });

  describe('execute(): the whole pipeline, as the caller, transport "tool"', () => {
    it('name mapping round trip: the model calls weather_get, weather.get runs', async () => {
      const before = calls.weather;
      const { outcome } = await probe({ methods: ['weather.get'], call: { name: 'weather_get', arguments: { city: 'Porto' } } });
      expect(outcome).toEqual({ result: { city: 'Porto', temperatureC: 21 } });
      expect(calls.weather).toBe(before + 1);
    });

    it('a protected method runs with the role (as the caller, transport "tool"), and is denied without it — its handler never called', async () => {
      const before = calls.secret;
      expect((await probe({ methods: ['secret.read'], call: { name: 'secret_read' } }, admin)).outcome).toEqual({ result: { secret: 42, transport: 'tool', user: 'alice' } });
      expect(calls.secret).toBe(before + 1);

      for (const headers of [nobody, {}]) {
        const { outcome } = await probe({ methods: ['secret.read'], call: { name: 'secret_read' } }, headers);
        expect(outcome).toEqual({ error: 'Error -32001 (Access denied): One of the following roles is required: admin', code: -32001, isToolError: true });
        expect(outcome.error).toContain('Access denied');
      }
      expect(calls.secret).toBe(before + 1);
    });

    it('-32602 becomes text listing the violations; arguments that are not an object are -32602 too; the handler is not called', async () => {
      const before = calls.weather;
      expect((await probe({ methods: ['weather.get'], call: { name: 'weather_get', arguments: { city: '', country: 'PT' } } })).outcome).toEqual({
        error: 'Error -32602: Invalid params\n  - country: Unknown parameter\n  - city: city should not be empty',
        code: -32602,
        isToolError: true,
      });
      expect((await probe({ methods: ['weather.get'], call: { name: 'weather_get', arguments: ['Porto'] } })).outcome).toEqual({
        error: 'Error -32602: Invalid params\n  - (params): the tool arguments must be a JSON object',
        code: -32602,
        isToolError: true,
      });
      expect(calls.weather).toBe(before);
    });

    it('rate limits count on the same counters as /rpc', async () => {
      const direct = () => t.rpc({ jsonrpc: '2.0', method: 'quota.take', id: 9 });
      expect((await direct()).body.result).toBe('taken');
      expect((await probe({ methods: ['quota.take'], call: { name: 'quota_take' } })).outcome).toEqual({ result: 'taken' });
      const limited = (await probe({ methods: ['quota.take'], call: { name: 'quota_take' } })).outcome;
      expect(limited).toMatchObject({ code: -32003, isToolError: true });
      expect(limited.error).toMatch(/^Error -32003: Rate limit exceeded/);
      expect((await direct()).body.error).toMatchObject({ code: -32003 });
    });

    it('the cache applies: a second tool call is served from it', async () => {
      const first = (await probe({ methods: ['report.cached'], call: { name: 'report_cached' } })).outcome;
      const second = (await probe({ methods: ['report.cached'], call: { name: 'report_cached' } })).outcome;
      expect(second).toEqual(first);
      expect(calls.cached).toBe(1);
    });

    it('an unexpected exception is a generic internal error: the cause is logged, never given to the model', async () => {
      const { outcome } = await probe({ methods: ['fail.hard'], call: { name: 'fail_hard' } });
      expect(outcome).toEqual({ error: 'Error -32603: Internal error', code: -32603, isToolError: true });
      expect(t.logger.text('error')).toContain('Unhandled error in fail.hard: db password is hunter2');
    });

    it('a stream method is collected into { rows }, stopped at maxStreamRows with truncated: true', async () => {
      expect((await probe({ methods: ['ticks.count'], call: { name: 'ticks_count', arguments: { n: 3 } } })).outcome).toEqual({ result: { rows: [{ i: 0 }, { i: 1 }, { i: 2 }] } });
      expect((await probe({ methods: ['ticks.count'], call: { name: 'ticks_count', arguments: { n: 50 } }, maxStreamRows: 2 })).outcome).toEqual({
        result: { rows: [{ i: 0 }, { i: 1 }], truncated: true },
      });
    });
  });

  describe('the tool loop across two turns through /rpc/stream', () => {
    const firstTurnRows = [
      { type: 'tool-call', id: 'call_0', name: 'weather_get', arguments: { city: 'Porto' } },
      { type: 'tool-call', id: 'call_1', name: 'secret_read', arguments: {} },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 50, outputTokens: 20, totalTokens: 70 } },
    ];
    const answerRows = [
      { delta: 'It is ' },
      { delta: '21 °C ' },
      { delta: 'in Porto.' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 90, outputTokens: 3, totalTokens: 93 } },
    ];

    const ask = async (headers: Record<string, string>) => {
      fake.enqueue({ body: [toolTurn([{ name: 'weather_get', args: { city: 'Porto' } }, { name: 'secret_read', args: {} }])] }, { body: [answerTurn(['It is ', '21 °C ', 'in Porto.'])] });
      const res = await t.post({ jsonrpc: '2.0', method: 'agent.run', params: { question: 'Weather in Porto, and the secret?' }, id: 1 }, { path: '/rpc/stream', headers });
      expect(res.status).toBe(200);
      return ndjson(await res.text());
    };

    it('with the role: tool-call rows, the turn\'s finish, tool-result rows, the answer\'s deltas, the usage row — and the results went back to the model', async () => {
      const before = { weather: calls.weather, secret: calls.secret };
      expect(await ask(admin)).toEqual([
        ...firstTurnRows,
        { type: 'tool-result', id: 'call_0', name: 'weather_get', result: { city: 'Porto', temperatureC: 21 } },
        { type: 'tool-result', id: 'call_1', name: 'secret_read', result: { secret: 42, transport: 'tool', user: 'alice' } },
        ...answerRows,
      ]);
      expect(calls).toMatchObject({ weather: before.weather + 1, secret: before.secret + 1 });
      expect(fake.requests).toHaveLength(2);
      const [first, second] = fake.requests.map((r) => r.json);
      expect(first.tools.map((tool: any) => tool.function.name)).toEqual(['weather_get', 'secret_read']);
      expect(second.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_0', type: 'function', function: { name: 'weather_get', arguments: '{"city":"Porto"}' } },
            { id: 'call_1', type: 'function', function: { name: 'secret_read', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"city":"Porto","temperatureC":21}' },
        { role: 'tool', tool_call_id: 'call_1', content: '{"secret":42,"transport":"tool","user":"alice"}' },
      ]);
    });

    it('without the role: the protected tool\'s result is the denial (the model reads "Access denied"), its handler not called, the loop goes on', async () => {
      const before = calls.secret;
      const denial = 'Error -32001 (Access denied): One of the following roles is required: admin';
      expect(await ask(nobody)).toEqual([
        ...firstTurnRows,
        { type: 'tool-result', id: 'call_0', name: 'weather_get', result: { city: 'Porto', temperatureC: 21 } },
        { type: 'tool-result', id: 'call_1', name: 'secret_read', error: denial },
        ...answerRows,
      ]);
      expect(calls.secret).toBe(before);
      expect(fake.requests[1].json.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: denial });
    });

    it('-32602 reaches the model as the tool result text', async () => {
      fake.enqueue({ body: [toolTurn([{ name: 'weather_get', args: {} }])] }, { body: [answerTurn(['Which city?'])] });
      const res = await t.post({ jsonrpc: '2.0', method: 'agent.run', params: { question: 'Weather?' }, id: 1 }, { path: '/rpc/stream', headers: admin });
      const rows = ndjson(await res.text());
      const text = 'Error -32602: Invalid params\n  - city: city should not be empty\n  - city: city must be a string';
      expect(rows[2]).toEqual({ type: 'tool-result', id: 'call_0', name: 'weather_get', error: text });
      expect(fake.requests[1].json.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_0', content: text });
      expect(rows.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    });

    it('a client leaving /rpc/stream while a tool runs aborts the tool call\'s ctx.signal (the loop\'s signal reaches the method)', async () => {
      fake.enqueue({ body: [toolTurn([{ name: 'slow_wait', args: {} }])] });
      const started = new Promise<void>((resolve) => (slow.started = resolve));
      const aborted = new Promise<number>((resolve) => (slow.aborted = resolve));
      const s = await openStream(t.url, { body: { jsonrpc: '2.0', method: 'agent.run', params: { question: 'wait', tools: ['slow.wait'] }, id: 1 } });
      await started;
      const leftAt = performance.now();
      s.destroy();
      expect((await aborted) - leftAt).toBeLessThan(1000);
    });
  });
});
