import { parseToolArguments, ToolCallAccumulator } from './tool-call-accumulator.js';

describe('ToolCallAccumulator', () => {
  it('joins indexed fragments, keeps the first id and name, and completes calls in start order', () => {
    const acc = new ToolCallAccumulator();
    acc.add({ index: 1, id: 'call_b', name: 'multiply', arguments: '' });
    acc.add({ index: 0, id: 'call_a', name: 'add' });
    acc.add({ index: 0, arguments: '{"a":' });
    acc.add({ index: 1, arguments: '{"a": 2' });
    acc.add({ index: 0, id: 'ignored', name: 'ignored', arguments: ' 2}' });
    acc.add({ index: 1, arguments: ', "b": 3}' });
    expect(acc.size).toBe(2);
    expect(acc.complete()).toEqual([
      { type: 'tool-call', id: 'call_b', name: 'multiply', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
      { type: 'tool-call', id: 'call_a', name: 'add', arguments: { a: 2 }, rawArguments: '{"a": 2}' },
    ]);
    expect(acc.size).toBe(0);
    expect(acc.complete()).toEqual([]);
  });

  it('an empty argument string means {}', () => {
    const acc = new ToolCallAccumulator();
    acc.add({ index: 0, id: 'c', name: 'now' });
    expect(acc.completeIndex(0)).toEqual({ type: 'tool-call', id: 'c', name: 'now', arguments: {}, rawArguments: '' });
    expect(acc.completeIndex(0)).toBeUndefined();
  });

  it('invalid JSON gives the event with error and rawArguments, never a throw', () => {
    const acc = new ToolCallAccumulator();
    acc.add({ index: 3, id: 'c', name: 'get_weather', arguments: '{"location": "Paris", "unit": ' });
    acc.add({ index: 3, arguments: 'celsius}' });
    const [call] = acc.complete();
    expect(call).toEqual({
      type: 'tool-call',
      id: 'c',
      name: 'get_weather',
      rawArguments: '{"location": "Paris", "unit": celsius}',
      error: expect.stringMatching(/^Invalid JSON in tool call arguments: /),
    });
    expect('arguments' in call).toBe(false);
  });

  it('completes one index alone and carries provider metadata; a call without id gets one from its index', () => {
    const acc = new ToolCallAccumulator();
    acc.add({ index: 2, name: 'a', arguments: '[1]' });
    acc.add({ index: 5, id: 'x', name: 'b' });
    acc.setProviderMetadata(2, { gemini: { thoughtSignature: 's' } });
    acc.setProviderMetadata(9, { ignored: true });
    expect(acc.has(2)).toBe(true);
    expect(acc.completeIndex(2)).toEqual({ type: 'tool-call', id: 'call_2', name: 'a', arguments: [1], rawArguments: '[1]', providerMetadata: { gemini: { thoughtSignature: 's' } } });
    expect(acc.has(2)).toBe(false);
    expect(acc.complete().map((c) => c.id)).toEqual(['x']);
  });

  it('parseToolArguments: whitespace-only is {}; scalars parse', () => {
    expect(parseToolArguments('  \n')).toEqual({ arguments: {} });
    expect(parseToolArguments('42')).toEqual({ arguments: 42 });
    expect(parseToolArguments('{').error).toMatch(/Invalid JSON/);
  });
});
