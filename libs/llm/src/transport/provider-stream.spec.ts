import { openAiChat } from '../providers/openai-chat.js';
import type { LlmEvent } from '../model/events.js';

const chunk = (content: string) => `data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const end = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

/** A fetch whose body is exactly these byte pieces, read one per pull, counting the pulls. */
function piecewiseFetch(pieces: Uint8Array[]) {
  const state = { pulls: 0 };
  const fetchImpl = (async () => {
    let i = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          state.pulls++;
          if (i < pieces.length) controller.enqueue(pieces[i++]);
          else controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }) as unknown as typeof fetch;
  return { fetchImpl, state };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('the provider stream driver', () => {
  it('pulls: no network read happens before an event is asked for, and one read per empty queue', async () => {
    const { fetchImpl, state } = piecewiseFetch([bytes(chunk('a')), bytes(chunk('b')), bytes(chunk('c') + end)]);
    const stream = openAiChat({ fetch: fetchImpl }).stream(request);
    const iterator = stream[Symbol.asyncIterator]();
    expect(state.pulls).toBe(0);
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text', delta: 'a' } });
    expect(state.pulls).toBe(1);
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text', delta: 'b' } });
    expect(state.pulls).toBe(2);
    const rest: LlmEvent[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
    expect(rest).toEqual([
      { type: 'text', delta: 'c' },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
  });

  it('joins a UTF-8 character split across reads (each half alone would decode to U+FFFD)', async () => {
    const whole = bytes(chunk('Grüße 😀') + end);
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (let i = 0; i < whole.length; i++) {
      if (whole[i] >= 0xc0) {
        pieces.push(whole.subarray(from, i + 1));
        from = i + 1;
      }
    }
    pieces.push(whole.subarray(from));
    expect(pieces.length).toBe(4);
    const { fetchImpl } = piecewiseFetch(pieces);
    const events: LlmEvent[] = [];
    for await (const event of openAiChat({ fetch: fetchImpl }).stream(request)) events.push(event);
    expect(events[0]).toEqual({ type: 'text', delta: 'Grüße 😀' });
  });

  it('an event that is not JSON is a provider error after the events before it', async () => {
    const { fetchImpl } = piecewiseFetch([bytes(chunk('ok') + 'data: {not json\n\n' + chunk('never'))]);
    const events: LlmEvent[] = [];
    await expect(
      (async () => {
        for await (const event of openAiChat({ fetch: fetchImpl }).stream(request)) events.push(event);
      })(),
    ).rejects.toMatchObject({ name: 'LlmProviderError', provider: 'openai-chat', type: 'invalid_event', message: 'The openai-chat stream sent an event that is not JSON: {not json' });
    expect(events).toEqual([{ type: 'text', delta: 'ok' }]);
  });

  it('a fetch that fails (connection refused) rejects at the first next() with that error', async () => {
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    await expect(openAiChat({ fetch: failing }).stream(request)[Symbol.asyncIterator]().next()).rejects.toThrow('fetch failed');
  });
});
