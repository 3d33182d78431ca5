import type { LlmEvent } from '../model/events.js';
import type { LlmProvider, LlmRequest } from '../model/request.js';
import { runToolLoop } from './run-tool-loop.js';

/** A provider that answers each turn from a script and records the requests. */
function scriptedProvider(turns: LlmEvent[][]): { provider: LlmProvider; requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  const provider = {
    name: 'scripted',
    async *stream(request: LlmRequest) {
      requests.push(structuredClone(request));
      yield* turns[requests.length - 1];
    },
  } as LlmProvider;
  return { provider, requests };
}

const finish = (reason: 'stop' | 'tool-calls'): LlmEvent => ({ type: 'finish', reason });

describe('runToolLoop', () => {
  it('rejects a maxTurns that is not a positive integer', async () => {
    const { provider } = scriptedProvider([]);
    for (const maxTurns of [0, -1, 1.5]) {
      await expect(runToolLoop({ provider, request: { model: 'm', messages: [] }, tools: [], maxTurns }).next()).rejects.toThrow(RangeError);
    }
  });

  it('describes request.tools and the loop tools (a loop tool wins a name clash); ends after a turn without calls', async () => {
    const { provider, requests } = scriptedProvider([[{ type: 'text', delta: 'done' }, finish('stop')]]);
    const events = [];
    for await (const event of runToolLoop({
      provider,
      request: { model: 'm', messages: [{ role: 'user', content: 'q' }], tools: [{ name: 'search', parameters: { type: 'object' } }, { name: 'calc', description: 'old', parameters: {} }] },
      tools: [{ name: 'calc', description: 'new', parameters: { type: 'object' }, execute: () => 1 }],
    })) events.push(event);
    expect(events).toEqual([{ type: 'text', delta: 'done' }, finish('stop')]);
    expect(requests[0].tools).toEqual([
      { name: 'search', parameters: { type: 'object' } },
      { name: 'calc', description: 'new', parameters: { type: 'object' } },
    ]);
  });

  it('sends results as text: strings as they are, other values as JSON (undefined as null), with the provider metadata of each call', async () => {
    const { provider, requests } = scriptedProvider([
      [
        { type: 'tool-call', id: 'a', name: 'text', arguments: {}, rawArguments: '' },
        { type: 'tool-call', id: 'b', name: 'object', arguments: { n: 1 }, rawArguments: '{"n":1}', providerMetadata: { gemini: { thoughtSignature: 's' } } },
        { type: 'tool-call', id: 'c', name: 'nothing', arguments: {}, rawArguments: '{}' },
        finish('tool-calls'),
      ],
      [finish('stop')],
    ]);
    const tools = [
      { name: 'text', parameters: {}, execute: () => 'plain' },
      { name: 'object', parameters: {}, execute: (args: { n: number }) => ({ doubled: args.n * 2 }) },
      { name: 'nothing', parameters: {}, execute: () => undefined },
    ];
    for await (const _ of runToolLoop({ provider, request: { model: 'm', messages: [{ role: 'user', content: 'q' }] }, tools })) void _;
    expect(requests[1].messages).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        toolCalls: [
          { id: 'a', name: 'text', arguments: {} },
          { id: 'b', name: 'object', arguments: { n: 1 }, providerMetadata: { gemini: { thoughtSignature: 's' } } },
          { id: 'c', name: 'nothing', arguments: {} },
        ],
      },
      { role: 'tool', toolCallId: 'a', name: 'text', content: 'plain' },
      { role: 'tool', toolCallId: 'b', name: 'object', content: '{"doubled":2}' },
      { role: 'tool', toolCallId: 'c', name: 'nothing', content: 'null' },
    ]);
  });
});
