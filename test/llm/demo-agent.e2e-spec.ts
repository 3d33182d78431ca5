/**
 * The demo's `agent.ask` end to end, offline (no key, no network): the demo's own model asks for
 * `weather_get` and `admin_stats`, the tool loop runs them through the pipeline as the caller
 * (`admin.stats` needs the admin role: alice has it, bob and anonymous callers get the denial as
 * the tool's result), and the model answers from the results — all as SSE rows of `toStreamRows`.
 */
import { Module } from '@nestjs/common';
import { createParser } from 'eventsource-parser';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AccountModule } from '../../apps/demo/src/account/account.module.js';
import { AgentModule } from '../../apps/demo/src/agent/agent.module.js';
import { ChatModel } from '../../apps/demo/src/llm/chat-model.js';
import { offlineToolCalls, type ChatCompletionRequest } from '../../apps/demo/src/llm/offline-chat-provider.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } }), AccountModule, AgentModule] })
class DemoAgentModule {}

const LLM_ENV = ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

function sseData(body: string): any[] {
  const rows: any[] = [];
  createParser({ onEvent: (e) => e.event === undefined && rows.push(JSON.parse(e.data)) }).feed(body);
  return rows;
}

describe('demo agent.ask (offline model, the app\'s own methods as tools)', () => {
  let t: TestApp;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // No provider configured: the offline model the demo starts itself.
    for (const name of LLM_ENV) {
      saved[name] = process.env[name];
      delete process.env[name];
    }
    t = await startTestApp(DemoAgentModule);
  });
  afterAll(async () => {
    await t.close();
    for (const name of LLM_ENV) if (saved[name] !== undefined) process.env[name] = saved[name];
  });

  const tokenOf = async (username: string) => (await t.rpc({ jsonrpc: '2.0', method: 'auth.login', params: { username, password: `${username}-pw` }, id: 1 })).body.result.token as string;

  const ask = async (question: string, token?: string) => {
    const res = await t.post(
      { jsonrpc: '2.0', method: 'agent.ask', params: { question, delayMs: 0 }, id: 1 },
      { path: '/rpc/stream', headers: token ? { authorization: `Bearer ${token}` } : {} },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    return sseData(await res.text());
  };

  const answerOf = (rows: any[]) => rows.filter((r) => typeof r.delta === 'string' && r.type === undefined).map((r) => r.delta).join('');

  it('the offline model picks tools from the prompt and takes "in <place>" as a string argument', () => {
    const tools: ChatCompletionRequest['tools'] = [
      { function: { name: 'weather_get', parameters: { properties: { city: { type: 'string' } } } } },
      { function: { name: 'admin_stats', parameters: { properties: {} } } },
    ];
    expect(offlineToolCalls('What is the weather in Porto?', tools)).toEqual([{ name: 'weather_get', arguments: { city: 'Porto' } }]);
    expect(offlineToolCalls('Weather and server stats please', tools)).toEqual([
      { name: 'weather_get', arguments: {} },
      { name: 'admin_stats', arguments: {} },
    ]);
    expect(offlineToolCalls('Hello there', tools)).toEqual([]);
  });

  it('with the admin role: tool calls, their results, then the answer built from them, then the usage', async () => {
    expect(t.app.get(ChatModel).providerName).toBe('offline');
    const rows = await ask('What is the weather in Porto, and the server stats?', await tokenOf('alice'));
    expect(rows.slice(0, 3)).toEqual([
      { type: 'tool-call', id: 'call_offline_0', name: 'weather_get', arguments: { city: 'Porto' } },
      { type: 'tool-call', id: 'call_offline_1', name: 'admin_stats', arguments: {} },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 } },
    ]);
    const weather = rows[3];
    expect(weather).toEqual({ type: 'tool-result', id: 'call_offline_0', name: 'weather_get', result: { city: 'Porto', temperatureC: expect.any(Number), conditions: expect.any(String) } });
    expect(rows[4]).toEqual({ type: 'tool-result', id: 'call_offline_1', name: 'admin_stats', result: { uptimeSeconds: expect.any(Number), reportRuns: 0 } });
    expect(rows.at(-1)).toMatchObject({ type: 'finish', reason: 'stop', usage: { inputTokens: 10 } });
    expect(answerOf(rows.slice(5, -1))).toBe(`weather_get says: ${JSON.stringify(weather.result)} admin_stats says: ${JSON.stringify(rows[4].result)}`);
    expect(rows.slice(5, -1).every((r) => typeof r.delta === 'string')).toBe(true);
  });

  it('without the role (bob, or anonymous): admin_stats answers the model "Access denied", the weather tool still works', async () => {
    const denial = 'Error -32001 (Access denied): One of the following roles is required: admin';
    for (const token of [await tokenOf('bob'), undefined]) {
      const rows = await ask('Server stats and the weather in Lisbon', token);
      expect(rows[3]).toMatchObject({ type: 'tool-result', name: 'weather_get', result: { city: 'Lisbon' } });
      expect(rows[4]).toEqual({ type: 'tool-result', id: 'call_offline_1', name: 'admin_stats', error: denial });
      expect(answerOf(rows)).toContain(`admin_stats could not help: ${denial}`);
      expect(rows.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    }
  });

  it('a missing argument: the -32602 reaches the model, which says so; a prompt needing no tool is answered directly', async () => {
    const rows = await ask('How is the weather?');
    expect(rows[2]).toEqual({ type: 'tool-result', id: 'call_offline_0', name: 'weather_get', error: 'Error -32602: Invalid params\n  - city: city must be shorter than or equal to 80 characters\n  - city: city should not be empty\n  - city: city must be a string' });
    expect(answerOf(rows)).toContain('weather_get could not help: Error -32602: Invalid params');

    const plain = await ask('Hello agent');
    expect(plain.filter((r) => r.type !== undefined)).toEqual([{ type: 'finish', reason: 'stop', usage: expect.any(Object) }]);
    expect(answerOf(plain)).toBe('You said: "Hello agent". Streaming works: each word is its own event.');
  });
});
