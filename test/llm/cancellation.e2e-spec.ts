/**
 * Cancellation and backpressure over real HTTP, for every adapter: aborting the signal or leaving
 * the loop closes the upstream connection within a second (the fake provider sees the socket
 * close) and an abort ends the iterator with an AbortError; a consumer that stops pulling makes
 * the provider's writes wait for `drain` — the signal that backpressure reached the upstream.
 */
import { anthropicMessages, bedrockConverseStream, geminiGenerateContent, openAiChat, openAiResponses, type LlmProvider, type LlmRequest } from '@nest-jsonrpc/llm';
import { startFakeProvider, type FakeAnswer, type FakeProvider } from './support/fake-provider.js';
import { bedrockEventFrame, bedrockFrames, fixture } from './support/fixtures.js';

const request: LlmRequest = { model: 'test-model', messages: [{ role: 'user', content: 'Tell me a long story' }] };

interface Adapter {
  name: string;
  make(url: string): LlmProvider;
  /** The first events of a recorded transcript, then nothing: the provider keeps the stream open. */
  stalled(): FakeAnswer;
  /** One text chunk of this provider's wire format (for endless streams). */
  textChunk(i: number): Buffer;
}

const firstSseEvents = (body: Buffer, count: number, separator = '\n\n') =>
  Buffer.from(body.toString('utf8').split(separator).slice(0, count).join(separator) + separator);

const adapters: Adapter[] = [
  {
    name: 'openai-chat',
    make: (url) => openAiChat({ apiKey: 'k', baseUrl: url }),
    stalled: () => ({ body: [firstSseEvents(fixture('openai-chat', 'text.sse'), 3)], hang: true }),
    textChunk: (i) => Buffer.from(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"token ${i} "},"finish_reason":null}]}\n\n`),
  },
  {
    name: 'openai-responses',
    make: (url) => openAiResponses({ apiKey: 'k', baseUrl: url }),
    stalled: () => ({ body: [firstSseEvents(fixture('openai-responses', 'text.sse'), 7)], hang: true }),
    textChunk: (i) => Buffer.from(`event: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"token ${i} "}\n\n`),
  },
  {
    name: 'anthropic-messages',
    make: (url) => anthropicMessages({ apiKey: 'k', baseUrl: url }),
    stalled: () => ({ body: [firstSseEvents(fixture('anthropic-messages', 'text.sse'), 5)], hang: true }),
    textChunk: (i) => Buffer.from(`event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"token ${i} "}}\n\n`),
  },
  {
    name: 'gemini-generate-content',
    make: (url) => geminiGenerateContent({ apiKey: 'k', baseUrl: url }),
    stalled: () => ({ body: [firstSseEvents(fixture('gemini', 'parallel-tools-turn2.sse'), 2, '\r\n\r\n')], hang: true }),
    textChunk: (i) => Buffer.from(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"token ${i} "}]},"index":0}]}\r\n\r\n`),
  },
  {
    name: 'bedrock-converse-stream',
    make: (url) => bedrockConverseStream({ baseUrl: url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } }),
    stalled: () => ({ body: bedrockFrames('text.jsonl').slice(0, 4), headers: { 'content-type': 'application/vnd.amazon.eventstream' }, hang: true }),
    textChunk: (i) => bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: `token ${i} ` } }),
  },
];

describe.each(adapters)('$name: cancellation and backpressure', (adapter) => {
  let fake: FakeProvider;
  beforeEach(async () => {
    fake = await startFakeProvider();
  });
  afterEach(() => fake.close());

  it('aborting the signal mid-stream ends the iterator with an AbortError and closes the upstream connection within a second', async () => {
    fake.enqueue(adapter.stalled());
    const controller = new AbortController();
    const iterator = adapter.make(fake.url).stream(request, { signal: controller.signal })[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect(first.value).toMatchObject({ type: 'text' });
    // Drain what the stalled provider sent, then wait on the next (never arriving) event.
    const pending = (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return next;
      }
    })();
    const abortedAt = performance.now();
    controller.abort(new Error('client left'));
    const error = await pending.then(
      () => undefined,
      (e) => e,
    );
    expect(error).toBeInstanceOf(DOMException);
    expect(error.name).toBe('AbortError');
    expect(error.cause).toEqual(new Error('client left'));
    const closedAt = await fake.requests[0].closed;
    expect(closedAt - abortedAt).toBeLessThan(1000);
  });

  it('leaving the loop early (return()) closes the upstream connection within a second', async () => {
    fake.enqueue(adapter.stalled());
    let leftAt = 0;
    for await (const event of adapter.make(fake.url).stream(request)) {
      expect(event.type).toBe('text');
      leftAt = performance.now();
      break;
    }
    const closedAt = await fake.requests[0].closed;
    expect(closedAt - leftAt).toBeLessThan(1000);
  });

  it('a signal aborted before the first next() sends no request', async () => {
    const controller = new AbortController();
    controller.abort();
    const iterator = adapter.make(fake.url).stream(request, { signal: controller.signal })[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake.requests).toHaveLength(0);
  });

  it('a consumer that stops pulling makes the provider wait for drain; pulling again lets it write on', async () => {
    fake.enqueue({
      headers: { 'content-type': adapter.name === 'bedrock-converse-stream' ? 'application/vnd.amazon.eventstream' : 'text/event-stream' },
      stream: async (write, gone) => {
        for (let i = 0; !gone.aborted; i++) await write(adapter.textChunk(i));
      },
    });
    const iterator = adapter.make(fake.url).stream(request)[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'text', delta: 'token 0 ' });
    // The consumer now stops pulling. The signal: the provider's write() returns false and it
    // waits for 'drain' — the socket and the kernel buffers are full because nobody reads.
    const bytesWhenBlocked = await fake.blocked();
    expect(bytesWhenBlocked).toBeGreaterThan(0);
    // Resume: every event arrives in order, and the provider gets to write past the blocked point.
    let expected = 1;
    while (fake.bytesWritten() <= bytesWhenBlocked + 64 * 1024) {
      const next = await iterator.next();
      expect(next.value).toEqual({ type: 'text', delta: `token ${expected++} ` });
    }
    await iterator.return!(undefined);
    await fake.requests[0].closed;
  });
});
