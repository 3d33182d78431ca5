import type { LlmRawEvent, LlmToolLoopEvent } from '../model/events.js';
import { toStreamRows } from './to-stream-rows.js';

async function* events(): AsyncGenerator<LlmToolLoopEvent | LlmRawEvent> {
  yield { type: 'raw', provider: 'p', data: { anything: true } };
  yield { type: 'reasoning', delta: 'thinking' };
  yield { type: 'text', delta: 'Hi' };
  yield { type: 'tool-call', id: 'c1', name: 'f', arguments: { x: 1 }, rawArguments: '{"x":1}', providerMetadata: { gemini: {} } };
  yield { type: 'tool-call', id: 'c2', name: 'g', rawArguments: '{', error: 'Invalid JSON' };
  yield { type: 'tool-result', id: 'c1', name: 'f', result: { ok: true }, isError: false };
  yield { type: 'tool-result', id: 'c2', name: 'g', error: 'bad args', isError: true };
  yield { type: 'finish', reason: 'other', rawReason: 'x', message: 'Stopped' };
  yield { type: 'finish', reason: 'stop', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } };
}

const collect = async <T>(iterable: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

describe('toStreamRows', () => {
  it('maps every event to its documented row; raw events are dropped; rawReason and providerMetadata stay server-side', async () => {
    expect(await collect(toStreamRows(events()))).toEqual([
      { type: 'reasoning', delta: 'thinking' },
      { delta: 'Hi' },
      { type: 'tool-call', id: 'c1', name: 'f', arguments: { x: 1 } },
      { type: 'tool-call', id: 'c2', name: 'g', rawArguments: '{', error: 'Invalid JSON' },
      { type: 'tool-result', id: 'c1', name: 'f', result: { ok: true } },
      { type: 'tool-result', id: 'c2', name: 'g', error: 'bad args' },
      { type: 'finish', reason: 'other', message: 'Stopped' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } },
    ]);
  });

  it('{ reasoning: false } leaves reasoning out', async () => {
    const rows = await collect(toStreamRows(events(), { reasoning: false }));
    expect(rows.some((r) => 'type' in r && r.type === 'reasoning')).toBe(false);
    expect(rows[0]).toEqual({ delta: 'Hi' });
  });
});
