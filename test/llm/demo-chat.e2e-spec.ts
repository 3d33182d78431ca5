/**
 * The demo's `chat.stream` streams through an `@nest-jsonrpc/llm` adapter: by default from the
 * offline model the demo starts itself (no key, no network), with a provider's key (or
 * LLM_PROVIDER) from that provider — here the fake provider replaying a recorded Anthropic answer
 * via LLM_BASE_URL. A client leaving /rpc/stream aborts ctx.signal, which closes the upstream.
 */
import { Module } from '@nestjs/common';
import { createParser } from 'eventsource-parser';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { ChatModel, chooseChatProvider } from '../../apps/demo/src/llm/chat-model.js';
import { StreamingDemoModule } from '../../apps/demo/src/streaming/streaming-demo.module.js';
import { startTestApp } from '../support/rpc-test-app.js';
import { call, openStream } from '../streaming/stream-client.js';
import { startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { fixture } from './support/fixtures.js';

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } }), StreamingDemoModule] })
class DemoChatModule {}

const LLM_ENV = ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/** Runs `body` with exactly `env` for the LLM variables (the app reads them when it starts). */
async function withEnv(env: Record<string, string>, body: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(LLM_ENV.map((name) => [name, process.env[name]]));
  for (const name of LLM_ENV) delete process.env[name];
  Object.assign(process.env, env);
  try {
    await body();
  } finally {
    for (const name of LLM_ENV) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

function sseRows(body: string): Array<{ event?: string; data: any }> {
  const rows: Array<{ event?: string; data: any }> = [];
  createParser({ onEvent: (e) => rows.push({ event: e.event, data: JSON.parse(e.data) }) }).feed(body);
  return rows;
}

describe('demo chat.stream through an LLM adapter', () => {
  it('picks the provider from LLM_PROVIDER, else from the credentials present, else offline', () => {
    expect(chooseChatProvider({})).toBe('offline');
    expect(chooseChatProvider({ GEMINI_API_KEY: 'g', ANTHROPIC_API_KEY: 'a' })).toBe('anthropic');
    expect(chooseChatProvider({ OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' })).toBe('openai');
    expect(chooseChatProvider({ GEMINI_API_KEY: 'g' })).toBe('gemini');
    expect(chooseChatProvider({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's' })).toBe('bedrock');
    expect(chooseChatProvider({ AWS_BEARER_TOKEN_BEDROCK: 'b' })).toBe('bedrock');
    expect(chooseChatProvider({ OPENAI_API_KEY: 'o', LLM_PROVIDER: 'offline' })).toBe('offline');
    expect(() => chooseChatProvider({ LLM_PROVIDER: 'cohere' })).toThrow('LLM_PROVIDER must be one of openai, openai-responses, anthropic, gemini, bedrock, offline; got "cohere"');
  });

  it('offline by default: the reply streams word by word from the demo\'s own model over HTTP', async () => {
    await withEnv({}, async () => {
      const t = await startTestApp(DemoChatModule);
      try {
        const model = t.app.get(ChatModel);
        expect(model.providerName).toBe('offline');
        const s = await openStream(t.url, { body: call('chat.stream', { prompt: 'ünï 😀', delayMs: 5 }) });
        const rows = sseRows(await s.ended);
        expect(rows.at(-1)).toEqual({ event: 'end', data: {} });
        const data = rows.filter((r) => r.event === undefined).map((r) => r.data);
        expect(data.at(-1)).toEqual({ done: true, finish_reason: 'stop' });
        expect(data.slice(0, -1)).toEqual(
          'You said: "ünï 😀". Streaming works: each word is its own event.'.match(/\S+\s*/g)!.map((delta, index) => ({ index, delta })),
        );
      } finally {
        await t.close();
      }
    });
  });

  describe('with a provider configured (the fake provider standing in for Anthropic)', () => {
    let fake: FakeProvider;
    beforeEach(async () => {
      fake = await startFakeProvider();
    });
    afterEach(() => fake.close());

    it('ANTHROPIC_API_KEY selects Anthropic: the recorded answer streams as { index, delta } rows', async () => {
      await withEnv({ ANTHROPIC_API_KEY: 'sk-ant-demo', LLM_BASE_URL: fake.url, LLM_MODEL: 'claude-sonnet-4-20250514' }, async () => {
        fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn2.sse')] });
        const t = await startTestApp(DemoChatModule);
        try {
          expect(t.app.get(ChatModel).providerName).toBe('anthropic');
          const s = await openStream(t.url, { body: call('chat.stream', { prompt: 'Add 2 and 3' }) });
          const data = sseRows(await s.ended)
            .filter((r) => r.event === undefined)
            .map((r) => r.data);
          expect(data).toEqual([
            { index: 0, delta: 'The results' },
            { index: 1, delta: ' are:\n- 2 + 3 = ' },
            { index: 2, delta: '5\n- 2 × 3 = 6' },
            { done: true, finish_reason: 'stop' },
          ]);
          const upstream = fake.requests[0];
          expect(upstream.path).toBe('/v1/messages');
          expect(upstream.headers['x-api-key']).toBe('sk-ant-demo');
          expect(upstream.json).toMatchObject({ model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: [{ type: 'text', text: 'Add 2 and 3' }] }], stream: true });
        } finally {
          await t.close();
        }
      });
    });

    it('a client leaving /rpc/stream aborts the provider call: the upstream connection closes within a second', async () => {
      await withEnv({ LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-demo', LLM_BASE_URL: `${fake.url}/v1` }, async () => {
        const firstChunks = fixture('openai-chat', 'text.sse').toString('utf8').split('\n\n').slice(0, 3).join('\n\n') + '\n\n';
        fake.enqueue({ body: [Buffer.from(firstChunks)], hang: true });
        const t = await startTestApp(DemoChatModule);
        try {
          const s = await openStream(t.url, { body: call('chat.stream', { prompt: 'Hello' }) });
          await s.waitFor((text) => text.includes('"delta":" unable"'));
          const leftAt = performance.now();
          s.destroy();
          const closedAt = await fake.requests[0].closed;
          expect(closedAt - leftAt).toBeLessThan(1000);
        } finally {
          await t.close();
        }
      });
    });

    it('a provider error (bad key) ends the stream with an in-band error frame; the cause is logged, never sent', async () => {
      await withEnv({ LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-bad', LLM_BASE_URL: `${fake.url}/v1` }, async () => {
        fake.enqueue({ status: 401, headers: { 'content-type': 'application/json' }, body: [fixture('openai-chat', 'http-401.json')] });
        const t = await startTestApp(DemoChatModule);
        try {
          const res = await t.post(call('chat.stream', { prompt: 'Hello' }), { path: '/rpc/stream' });
          // The handler's iterable was returned, so the stream had started (rpc-stream-routes): the
          // error is the in-band frame of docs/streaming.md.
          expect(res.status).toBe(200);
          const body = await res.text();
          expect(body).toBe('event: error\ndata: {"error":{"code":-32603,"message":"Internal error"}}\n\nevent: end\ndata: {}\n\n');
          expect(body).not.toContain('Incorrect API key');
          expect(t.logger.text('error')).toContain('Incorrect API key provided');
        } finally {
          await t.close();
        }
      });
    });
  });
});
