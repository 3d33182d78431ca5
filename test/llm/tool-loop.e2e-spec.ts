/**
 * runToolLoop over real HTTP against recorded two-turn conversations: the first turn's text
 * streams live, its tool calls run concurrently, one tool-result per call is yielded, the second
 * request carries the assistant turn and the results in the provider's own shape, and the second
 * turn ends the loop. Plus maxTurns, a tool that throws, invalid tool JSON, an unknown tool, abort.
 */
import {
  anthropicMessages,
  bedrockConverseStream,
  geminiGenerateContent,
  openAiChat,
  openAiResponses,
  runToolLoop,
  toStreamRows,
  type LlmProvider,
  type LlmTool,
  type LlmToolLoopEvent,
} from '@nest-jsonrpc/llm';
import { collect } from './support/collect.js';
import { startFakeProvider, type FakeAnswer, type FakeProvider } from './support/fake-provider.js';
import { bedrockFrames, fixture } from './support/fixtures.js';

const numbers = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] };

/** add and multiply, recording their calls and how many ran at the same time. */
function arithmeticTools(options: { multiply?: (a: number, b: number) => unknown } = {}) {
  const calls: string[] = [];
  let running = 0;
  let maxConcurrent = 0;
  const run = async (name: string, result: () => unknown) => {
    calls.push(name);
    running++;
    maxConcurrent = Math.max(maxConcurrent, running);
    await new Promise((resolve) => setTimeout(resolve, 20));
    running--;
    return result();
  };
  const tools: LlmTool[] = [
    { name: 'add', description: 'Add two numbers', parameters: numbers, execute: (args: { a: number; b: number }) => run('add', () => args.a + args.b) },
    {
      name: 'multiply',
      description: 'Multiply two numbers',
      parameters: numbers,
      execute: (args: { a: number; b: number }) => run('multiply', () => (options.multiply ? options.multiply(args.a, args.b) : args.a * args.b)),
    },
  ];
  return { tools, calls, maxConcurrent: () => maxConcurrent };
}

const question = { model: 'm', system: 'Always use both add and multiply at the same time.', messages: [{ role: 'user' as const, content: 'Add and multiply the number 2 and 3' }] };

describe('runToolLoop over real HTTP', () => {
  let fake: FakeProvider;
  beforeEach(async () => {
    fake = await startFakeProvider();
  });
  afterEach(() => fake.close());

  it('anthropic: two recorded turns — live text, concurrent tools, results in one user turn, then the answer', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn1.sse')] }, { body: [fixture('anthropic-messages', 'parallel-tools-turn2.sse')] });
    const arithmetic = arithmeticTools();
    const { events, error } = await collect(runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: arithmetic.tools, maxTurns: 4 }));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', delta: "I'll add an" },
      { type: 'text', delta: 'd multiply the numbers 2 and 3 for' },
      { type: 'text', delta: ' you.' },
      { type: 'tool-call', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
      { type: 'tool-call', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
      { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 502, outputTokens: 137, totalTokens: 639, cachedInputTokens: 0 } },
      { type: 'tool-result', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', result: 5, isError: false },
      { type: 'tool-result', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', result: 6, isError: false },
      { type: 'text', delta: 'The results' },
      { type: 'text', delta: ' are:\n- 2 + 3 = ' },
      { type: 'text', delta: '5\n- 2 × 3 = 6' },
      { type: 'finish', reason: 'stop', rawReason: 'end_turn', usage: { inputTokens: 700, outputTokens: 31, totalTokens: 731, cachedInputTokens: 0 } },
    ]);
    expect(arithmetic.calls).toEqual(['add', 'multiply']);
    expect(arithmetic.maxConcurrent()).toBe(2);
    expect(fake.requests).toHaveLength(2);
    const [first, second] = fake.requests.map((r) => r.json);
    // The tools' definitions are sent to the model, every turn.
    expect(first.tools).toEqual([
      { name: 'add', description: 'Add two numbers', input_schema: numbers },
      { name: 'multiply', description: 'Multiply two numbers', input_schema: numbers },
    ]);
    expect(second.tools).toEqual(first.tools);
    expect(second.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Add and multiply the number 2 and 3' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: "I'll add and multiply the numbers 2 and 3 for you." },
          { type: 'tool_use', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', input: { a: 2, b: 3 } },
          { type: 'tool_use', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', input: { a: 2, b: 3 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', content: '5' },
          { type: 'tool_result', tool_use_id: 'toolu_0113xQa4VtccyoXcHaukkzom', content: '6' },
        ],
      },
    ]);
  });

  it('gemini: two recorded turns — functionResponse carries the name, the thought signature goes back', async () => {
    fake.enqueue({ body: [fixture('gemini', 'parallel-tools-turn1.sse')] }, { body: [fixture('gemini', 'parallel-tools-turn2.sse')] });
    const arithmetic = arithmeticTools();
    const { events, error } = await collect(runToolLoop({ provider: geminiGenerateContent({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: arithmetic.tools }));
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'tool-result')).toEqual([
      { type: 'tool-result', id: 'call_0', name: 'add', result: 5, isError: false },
      { type: 'tool-result', id: 'call_1', name: 'multiply', result: 6, isError: false },
    ]);
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta).join('')).toBe('The sum of 2 and 3 is 5 and the product of 2 and 3 is 6.');
    const second = fake.requests[1].json;
    expect(second.contents).toEqual([
      { role: 'user', parts: [{ text: 'Add and multiply the number 2 and 3' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'add', args: { a: 2, b: 3 } }, thoughtSignature: expect.stringMatching(/^CiQB0e2Kb02QlBJ2I5/) },
          { functionCall: { name: 'multiply', args: { b: 3, a: 2 } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'add', response: { output: '5' } } },
          { functionResponse: { name: 'multiply', response: { output: '6' } } },
        ],
      },
    ]);
  });

  const secondTurnShapes: Array<{ name: string; provider: (url: string) => LlmProvider; turn1: FakeAnswer; turn2: FakeAnswer; expectSecond: (json: any) => void }> = [
    {
      name: 'openai-chat',
      provider: (url) => openAiChat({ apiKey: 'k', baseUrl: url }),
      turn1: { body: [fixture('openai-chat', 'parallel-tools.sse')] },
      turn2: { body: [fixture('openai-chat', 'text.sse')] },
      expectSecond: (json) =>
        expect(json.messages.slice(1)).toEqual([
          { role: 'user', content: 'Add and multiply the number 2 and 3' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_lQnnsesjFMWMQ5IeWPHzR4th', type: 'function', function: { name: 'GetWeatherArgs', arguments: '{"city":"Edinburgh","country":"UK","units":"c"}' } },
              { id: 'call_2xjOUgaCdiwAcl9ZBL9LyMUU', type: 'function', function: { name: 'get_stock_price', arguments: '{"ticker":"AAPL","exchange":"NASDAQ"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_lQnnsesjFMWMQ5IeWPHzR4th', content: 'Edinburgh: 12 C' },
          { role: 'tool', tool_call_id: 'call_2xjOUgaCdiwAcl9ZBL9LyMUU', content: '{"price":231.5}' },
        ]),
    },
    {
      name: 'openai-responses',
      provider: (url) => openAiResponses({ apiKey: 'k', baseUrl: url }),
      turn1: { body: [fixture('openai-responses', 'parallel-tools.sse')] },
      turn2: { body: [fixture('openai-responses', 'text.sse')] },
      expectSecond: (json) =>
        expect(json.input).toEqual([
          { role: 'user', content: 'Add and multiply the number 2 and 3' },
          { type: 'function_call', call_id: 'call_3kTB5GwkneSeSzqRU0vGYPDL', name: 'add', arguments: '{"a":2,"b":3}' },
          { type: 'function_call', call_id: 'call_Jt8bB5S9YYfmIi76VQmbBbRU', name: 'multiply', arguments: '{"a":2,"b":3}' },
          { type: 'function_call_output', call_id: 'call_3kTB5GwkneSeSzqRU0vGYPDL', output: '5' },
          { type: 'function_call_output', call_id: 'call_Jt8bB5S9YYfmIi76VQmbBbRU', output: '6' },
        ]),
    },
    {
      name: 'bedrock-converse-stream',
      provider: (url) => bedrockConverseStream({ baseUrl: url, region: 'us-east-1', credentials: { accessKeyId: 'A', secretAccessKey: 'S' } }),
      turn1: { body: bedrockFrames('parallel-tools.jsonl') },
      turn2: { body: bedrockFrames('text.jsonl') },
      expectSecond: (json) =>
        expect(json.messages).toEqual([
          { role: 'user', content: [{ text: 'Add and multiply the number 2 and 3' }] },
          {
            role: 'assistant',
            content: [
              { text: "I'll add and multiply the numbers 2 and 3 for you." },
              { toolUse: { toolUseId: 'tooluse_add_01GrN36E', name: 'add', input: { a: 2, b: 3 } } },
              { toolUse: { toolUseId: 'tooluse_mul_0113xQa4', name: 'multiply', input: { a: 2, b: 3 } } },
            ],
          },
          {
            role: 'user',
            content: [
              { toolResult: { toolUseId: 'tooluse_add_01GrN36E', content: [{ text: '5' }], status: 'success' } },
              { toolResult: { toolUseId: 'tooluse_mul_0113xQa4', content: [{ text: '6' }], status: 'success' } },
            ],
          },
        ]),
    },
  ];

  it.each(secondTurnShapes)('$name: the second request carries the calls and their results in the provider shape', async (c) => {
    fake.enqueue(c.turn1, c.turn2);
    const weatherAndStock: LlmTool[] = [
      { name: 'GetWeatherArgs', parameters: { type: 'object' }, execute: (args: { city: string }) => `${args.city}: 12 C` },
      { name: 'get_stock_price', parameters: { type: 'object' }, execute: () => ({ price: 231.5 }) },
    ];
    const tools = c.name === 'openai-chat' ? weatherAndStock : arithmeticTools().tools;
    const { events, error } = await collect(runToolLoop({ provider: c.provider(fake.url), request: question, tools }));
    expect(error).toBeUndefined();
    expect(fake.requests).toHaveLength(2);
    c.expectSecond(fake.requests[1].json);
    expect(events.filter((e) => e.type === 'finish').map((e) => (e as { reason: string }).reason)).toEqual(['tool-calls', 'stop']);
    expect(events.at(-1)!.type).toBe('finish');
  });

  it('maxTurns counts model requests: reached while tools are asked for, the calls are not run and a last finish says why', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn1.sse')] });
    const arithmetic = arithmeticTools();
    const { events, error } = await collect(runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: arithmetic.tools, maxTurns: 1 }));
    expect(error).toBeUndefined();
    expect(fake.requests).toHaveLength(1);
    expect(arithmetic.calls).toEqual([]);
    expect(events.slice(-2)).toEqual([
      { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 502, outputTokens: 137, totalTokens: 639, cachedInputTokens: 0 } },
      { type: 'finish', reason: 'other', message: 'Stopped after 1 model turn (maxTurns); the model still asked for: add, multiply' },
    ]);
    expect(events.some((e) => e.type === 'tool-result')).toBe(false);
  });

  it('a tool that throws gives the model an error result and the loop goes on', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn1.sse')] }, { body: [fixture('anthropic-messages', 'parallel-tools-turn2.sse')] });
    const arithmetic = arithmeticTools({
      multiply: () => {
        throw new Error('multiplier offline');
      },
    });
    const { events, error } = await collect(runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: arithmetic.tools }));
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'tool-result')).toEqual([
      { type: 'tool-result', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', result: 5, isError: false },
      { type: 'tool-result', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', error: 'multiplier offline', isError: true },
    ]);
    expect(fake.requests[1].json.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', content: '5' },
      { type: 'tool_result', tool_use_id: 'toolu_0113xQa4VtccyoXcHaukkzom', content: 'multiplier offline', is_error: true },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
  });

  it('invalid tool JSON and an unknown tool become error results; nothing is run for them', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'invalid-tool-json.sse')] }, { body: [fixture('anthropic-messages', 'text.sse')] });
    let ran = false;
    const weather: LlmTool = { name: 'get_weather', parameters: { type: 'object' }, execute: () => (ran = true) };
    const { events } = await collect(runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: [weather] }));
    expect(ran).toBe(false);
    const result = events.find((e) => e.type === 'tool-result');
    expect(result).toEqual({
      type: 'tool-result',
      id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
      name: 'get_weather',
      error: expect.stringMatching(/^The arguments were not valid JSON \(Invalid JSON in tool call arguments: .*\); nothing was run$/),
      isError: true,
    });
    // The call goes back with {} as its input (the model's text did not parse).
    expect(fake.requests[1].json.messages[1].content[1]).toEqual({ type: 'tool_use', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', input: {} });

    fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn1.sse')] }, { body: [fixture('anthropic-messages', 'text.sse')] });
    const onlyAdd = arithmeticTools().tools.filter((t) => t.name === 'add');
    const second = await collect(runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: onlyAdd }));
    expect(second.events.filter((e) => e.type === 'tool-result')).toEqual([
      { type: 'tool-result', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', result: 5, isError: false },
      { type: 'tool-result', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', error: 'Unknown tool: multiply', isError: true },
    ]);
  });

  it('aborting while a tool runs ends the loop with an AbortError at once; the tool sees its signal aborted', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn1.sse')] });
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const stuck: LlmTool[] = ['add', 'multiply'].map((name) => ({
      name,
      parameters: numbers,
      execute: (_args: unknown, { signal }: { signal: AbortSignal }) => {
        toolSignal = signal;
        setTimeout(() => controller.abort(), 10);
        return new Promise(() => undefined);
      },
    }));
    const started = performance.now();
    const { events, error } = await collect(runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: stuck, signal: controller.signal }));
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(toolSignal!.aborted).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'tool-calls' });
    expect(fake.requests).toHaveLength(1);
  });

  it('toStreamRows turns the loop into @RpcStream rows', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'parallel-tools-turn1.sse')] }, { body: [fixture('anthropic-messages', 'parallel-tools-turn2.sse')] });
    const loop = runToolLoop({ provider: anthropicMessages({ apiKey: 'k', baseUrl: fake.url }), request: question, tools: arithmeticTools().tools });
    const { events: rows } = await collect(toStreamRows(loop as AsyncIterable<LlmToolLoopEvent>));
    expect(rows).toEqual([
      { delta: "I'll add an" },
      { delta: 'd multiply the numbers 2 and 3 for' },
      { delta: ' you.' },
      { type: 'tool-call', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', arguments: { a: 2, b: 3 } },
      { type: 'tool-call', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', arguments: { a: 2, b: 3 } },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 502, outputTokens: 137, totalTokens: 639, cachedInputTokens: 0 } },
      { type: 'tool-result', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', result: 5 },
      { type: 'tool-result', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', result: 6 },
      { delta: 'The results' },
      { delta: ' are:\n- 2 + 3 = ' },
      { delta: '5\n- 2 × 3 = 6' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 700, outputTokens: 31, totalTokens: 731, cachedInputTokens: 0 } },
    ]);
  });
});
