/**
 * Every provider adapter against its recorded transcripts (fixtures/README.md), replayed over real
 * HTTP by the fake provider under every chunking — whole body, 1-byte chunks, random sizes (fixed
 * seeds), splits inside multi-byte UTF-8 characters, Bedrock frames split mid-prelude: the events
 * are exactly the expected ones every time. Errors: an HTTP error throws at the first `next()`
 * before any event; an error event mid-stream throws after the events before it.
 */
import {
  anthropicMessages,
  bedrockConverseStream,
  geminiGenerateContent,
  LlmProviderError,
  openAiChat,
  openAiResponses,
  type LlmEvent,
  type LlmProvider,
  type LlmRequest,
} from '@nest-jsonrpc/llm';
import { collect } from './support/collect.js';
import { startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import {
  bedrockChunkings,
  bedrockFrames,
  fixture,
  insideMultiByteCharacters,
  sseChunkings,
  type Chunking,
  type ProviderFolder,
} from './support/fixtures.js';

type ProviderName = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini' | 'bedrock';

const makeProvider = (name: ProviderName, url: string): LlmProvider => {
  switch (name) {
    case 'openai-chat':
      return openAiChat({ apiKey: 'sk-test', baseUrl: `${url}/v1` });
    case 'openai-responses':
      return openAiResponses({ apiKey: 'sk-test', baseUrl: `${url}/v1` });
    case 'anthropic-messages':
      return anthropicMessages({ apiKey: 'sk-ant-test', baseUrl: url });
    case 'gemini':
      return geminiGenerateContent({ apiKey: 'gm-test', baseUrl: `${url}/v1beta` });
    case 'bedrock':
      return bedrockConverseStream({ baseUrl: url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
  }
};

const request: LlmRequest = { model: 'test-model', messages: [{ role: 'user', content: 'Hi' }] };
const text = (delta: string): LlmEvent => ({ type: 'text', delta });
const reasoning = (delta: string): LlmEvent => ({ type: 'reasoning', delta });

interface TranscriptCase {
  provider: ProviderName;
  file: string;
  chunkings: Chunking[];
  events: LlmEvent[];
  /** The error the stream ends with, after `events`. */
  error?: Partial<LlmProviderError> & { status: number | undefined };
}

const sse = (provider: Exclude<ProviderName, 'bedrock'>, file: string, events: LlmEvent[], extra: Partial<TranscriptCase> = {}): TranscriptCase => ({
  provider,
  file,
  chunkings: sseChunkings,
  events,
  ...extra,
});
const bedrock = (file: string, events: LlmEvent[], extra: Partial<TranscriptCase> = {}): TranscriptCase => ({ provider: 'bedrock', file, chunkings: bedrockChunkings, events, ...extra });

const OPENAI_TEXT = ["I'm", ' unable', ' to', ' provide', ' real', '-time', ' updates', ',', ' including', ' current', ' weather', ' information', '.', ' For', ' the', ' latest', ' weather', ' in', ' San', ' Francisco', ',', ' I', ' recommend', ' checking', ' a', ' reliable', ' weather', ' website', ' or', ' app', ' such', ' as', ' the', ' Weather', ' Channel', ',', ' BBC', ' Weather', ',', ' or', ' a', ' local', ' San', ' Francisco', ' news', ' station', '.'];
const GEMINI_SIGNATURE_ADD =
  'CiQB0e2Kb02QlBJ2I5/zDqv1c0AUEV+Ct+vGYwdFdWC3cx3yIuUKXQHR7Ypv3ZUytEmQlCdJhzrfshB8YFIoW134jv3AuUL8L16mz3cXjEvhr8tAFeSEScUollNyBu/e3OFraKdblEfpDXY2UASkOMhrezbveAaD4bxTeBmXbcJNqLFeTwp/AdHtim8YarufF4O5TXWRjFYgnIppzlQcQfTEyqqmA8J3gLjGgyROG7/2MSw/0EakJKFOXuFth2Sdskl1sLjsD7lOvAxbmzDHITcg9l39JrSaXcHN405OLs1bfgIhKdi8m/wq+MXPL72IOuO6YjuBjud9qruxF3/THtP+netVeA==';
const invalidJson = expect.stringMatching(/^Invalid JSON in tool call arguments: /);

const cases: TranscriptCase[] = [
  // OpenAI Chat Completions
  sse('openai-chat', 'text.sse', [...OPENAI_TEXT.map(text), { type: 'finish', reason: 'stop', rawReason: 'stop', usage: { inputTokens: 14, outputTokens: 47, totalTokens: 61 } }]),
  sse('openai-chat', 'parallel-tools.sse', [
    { type: 'tool-call', id: 'call_lQnnsesjFMWMQ5IeWPHzR4th', name: 'GetWeatherArgs', arguments: { city: 'Edinburgh', country: 'UK', units: 'c' }, rawArguments: '{"city": "Edinburgh", "country": "UK", "units": "c"}' },
    { type: 'tool-call', id: 'call_2xjOUgaCdiwAcl9ZBL9LyMUU', name: 'get_stock_price', arguments: { ticker: 'AAPL', exchange: 'NASDAQ' }, rawArguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'tool_calls', usage: { inputTokens: 149, outputTokens: 60, totalTokens: 209 } },
  ]),
  sse('openai-chat', 'length.sse', [text('{"'), { type: 'finish', reason: 'length', rawReason: 'length', usage: { inputTokens: 17, outputTokens: 1, totalTokens: 18 } }]),
  sse('openai-chat', 'truncated-tool-json.sse', [
    { type: 'tool-call', id: 'call_lQnnsesjFMWMQ5IeWPHzR4th', name: 'GetWeatherArgs', rawArguments: '{"city": "Edinburgh', error: invalidJson },
    { type: 'finish', reason: 'length', rawReason: 'length', usage: { inputTokens: 149, outputTokens: 5, totalTokens: 154 } },
  ]),
  sse('openai-chat', 'error-mid-stream.sse', [text("I'm"), text(' unable'), text(' to')], {
    error: { provider: 'openai-chat', status: undefined, type: 'server_error', message: 'The server had an error while processing your request. Sorry about that!' },
  }),

  // OpenAI Responses
  sse('openai-responses', 'text.sse', [text('Oi'), text('!'), { type: 'finish', reason: 'stop', rawReason: 'completed', usage: { inputTokens: 19, outputTokens: 8, totalTokens: 27, cachedInputTokens: 0, reasoningTokens: 0 } }]),
  sse('openai-responses', 'parallel-tools.sse', [
    { type: 'tool-call', id: 'call_3kTB5GwkneSeSzqRU0vGYPDL', name: 'add', arguments: { a: 2, b: 3 }, rawArguments: '{"a":2,"b":3}' },
    { type: 'tool-call', id: 'call_Jt8bB5S9YYfmIi76VQmbBbRU', name: 'multiply', arguments: { a: 2, b: 3 }, rawArguments: '{"a":2,"b":3}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'completed', usage: { inputTokens: 52, outputTokens: 50, totalTokens: 102, cachedInputTokens: 0, reasoningTokens: 0 } },
  ]),
  sse('openai-responses', 'truncated-tool-json.sse', [
    { type: 'tool-call', id: 'call_3kTB5GwkneSeSzqRU0vGYPDL', name: 'add', arguments: { a: 2, b: 3 }, rawArguments: '{"a":2,"b":3}' },
    { type: 'tool-call', id: 'call_Jt8bB5S9YYfmIi76VQmbBbRU', name: 'multiply', rawArguments: '{"a', error: invalidJson },
    { type: 'finish', reason: 'length', rawReason: 'max_output_tokens', usage: { inputTokens: 52, outputTokens: 50, totalTokens: 102, cachedInputTokens: 0, reasoningTokens: 0 } },
  ]),
  sse('openai-responses', 'error-mid-stream.sse', [], {
    error: {
      provider: 'openai-responses',
      status: undefined,
      type: 'insufficient_quota',
      message: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
    },
  }),

  // Anthropic Messages
  sse('anthropic-messages', 'text.sse', [text('Hello'), text(' there'), text('!'), { type: 'finish', reason: 'stop', rawReason: 'end_turn', usage: { inputTokens: 11, outputTokens: 6, totalTokens: 17 } }]),
  sse('anthropic-messages', 'invalid-tool-json.sse', [
    text('I'),
    text("'ll check the current weather in Paris for you."),
    { type: 'tool-call', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', rawArguments: '{"location": "Paris", "unit": celsius}', error: invalidJson },
    { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 377, outputTokens: 65, totalTokens: 442, cachedInputTokens: 0 } },
  ]),
  sse('anthropic-messages', 'max-tokens-partial-json.sse', [
    text('I'),
    text("'ll create a comprehensive tax guide for"),
    text(' someone with multiple W2s an'),
    text('d save it in a file called taxes.txt. Let'),
    text(' me do that for you now.'),
    {
      type: 'tool-call',
      id: 'toolu_01EKqbqmZrGRXy18eN7m9kvY',
      name: 'make_file',
      rawArguments: '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s",\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes',
      error: invalidJson,
    },
    { type: 'finish', reason: 'length', rawReason: 'max_tokens', usage: { inputTokens: 450, outputTokens: 124, totalTokens: 574, cachedInputTokens: 0 } },
  ]),
  sse('anthropic-messages', 'parallel-tools-turn1.sse', [
    text("I'll add an"),
    text('d multiply the numbers 2 and 3 for'),
    text(' you.'),
    { type: 'tool-call', id: 'toolu_01GrN36ErVgy85ECZ6pbzBL4', name: 'add', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
    { type: 'tool-call', id: 'toolu_0113xQa4VtccyoXcHaukkzom', name: 'multiply', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 502, outputTokens: 137, totalTokens: 639, cachedInputTokens: 0 } },
  ]),
  sse(
    'anthropic-messages',
    'parallel-tools-turn2.sse',
    [text('The results'), text(' are:\n- 2 + 3 = '), text('5\n- 2 × 3 = 6'), { type: 'finish', reason: 'stop', rawReason: 'end_turn', usage: { inputTokens: 700, outputTokens: 31, totalTokens: 731, cachedInputTokens: 0 } }],
    { chunkings: [...sseChunkings, insideMultiByteCharacters] },
  ),
  sse('anthropic-messages', 'error-mid-stream.sse', [text('Hello'), text(' there')], {
    error: { provider: 'anthropic-messages', status: undefined, type: 'overloaded_error', message: 'Overloaded' },
  }),

  // Gemini
  sse('gemini', 'text.sse', [text('Olá!\n\nIn Portuguese, "hi" is **Olá!**'), { type: 'finish', reason: 'stop', rawReason: 'STOP', usage: { inputTokens: 11, outputTokens: 38, totalTokens: 49, reasoningTokens: 24 } }], {
    chunkings: [...sseChunkings, insideMultiByteCharacters],
  }),
  sse('gemini', 'parallel-tools-turn1.sse', [
    { type: 'tool-call', id: 'call_0', name: 'add', arguments: { a: 2, b: 3 }, rawArguments: '{"a":2,"b":3}', providerMetadata: { gemini: { thoughtSignature: GEMINI_SIGNATURE_ADD } } },
    { type: 'tool-call', id: 'call_1', name: 'multiply', arguments: { b: 3, a: 2 }, rawArguments: '{"b":3,"a":2}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'STOP', usage: { inputTokens: 121, outputTokens: 75, totalTokens: 196, reasoningTokens: 39 } },
  ]),
  sse('gemini', 'parallel-tools-turn2.sse', [
    text('The sum of'),
    text(' 2 and 3 is 5 and the product of 2 and '),
    text('3 is 6.'),
    { type: 'finish', reason: 'stop', rawReason: 'STOP', usage: { inputTokens: 181, outputTokens: 22, totalTokens: 203 } },
  ]),
  sse('gemini', 'thinking-tool-call.sse', [
    reasoning(
      '**Analyzing Weather Request**\n\nI\'ve determined the user wants the weather in Florence, Italy. The "weather" tool is appropriate, requiring a location. I\'ll pass "Florence, Italy" as the location argument to retrieve the information.\n\n\n',
    ),
    { type: 'tool-call', id: 'call_0', name: 'weather', arguments: { location: 'Florence, Italy' }, rawArguments: '{"location":"Florence, Italy"}', providerMetadata: { gemini: { thoughtSignature: expect.stringMatching(/^CiQB0e2Kb6DT1heRPFG6z9Ix2z/) } } },
    { type: 'finish', reason: 'tool-calls', rawReason: 'STOP', usage: { inputTokens: 54, outputTokens: 76, totalTokens: 130, reasoningTokens: 62 } },
  ]),
  sse('gemini', 'streamed-function-call-args.sse', [
    { type: 'tool-call', id: 'call_0', name: 'get_weather', arguments: { location: 'Boston, MA', days: 3 }, rawArguments: '{"location":"Boston, MA","days":3}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'STOP', usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 } },
  ]),
  sse('gemini', 'error-mid-stream.sse', [text('The sum of')], {
    error: { provider: 'gemini-generate-content', status: 503, type: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' },
  }),

  // Bedrock ConverseStream
  bedrock('text.jsonl', [
    ...['Let', ' me count the "', 'r"s in "', 'strawberry":\n\ns-t-', '**', 'r**-a-w-b', '-e-**', 'r**-**', 'r**-y\n\nThere', ' are **3', '** r', '\'s in "strawberry."'].map(text),
    { type: 'finish', reason: 'stop', rawReason: 'end_turn', usage: { inputTokens: 22, outputTokens: 55, totalTokens: 77 } },
  ]),
  bedrock('reasoning.jsonl', [
    ...['Let me count the r', '\'s in "', 'strawberry":', '\n\ns-t-r-a', '-w-b-e-r', '-r-y\n\nr', ' appears at positions ', '3, 8', ', and 9.\n\nSo there', " are 3 r's."].map(reasoning),
    ...['There', ' are **3** r\'s in "', 'strawberry":', '\n\n1', '. st', '**', 'r**awbe', '**r****', 'r**y'].map(text),
    { type: 'finish', reason: 'stop', rawReason: 'end_turn', usage: { inputTokens: 51, outputTokens: 94, totalTokens: 145 } },
  ]),
  bedrock('tool-call.jsonl', [
    text(' <think> The user wants me to:\n1. First call glob_search with pattern "**/*cursor*"\n2'),
    text('. After that returns files, call read_file for src/cursor-config.ts\n3. After read'),
    text("_file returns, answer with exactly: FOUND ISSUE_11409_CONTENT\n\nI've completed the glob_search"),
    text(' and found two files:\n- src/cursor-config.ts\n- .cursor/rules.md\n\nNow I'),
    text(' need to call read_file for src/cursor-config.ts. </think>'),
    { type: 'tool-call', id: 'functions.read_file:1', name: 'read_file', arguments: { target_file: 'src/cursor-config.ts' }, rawArguments: '{"target_file": "src/cursor-config.ts"}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 260, outputTokens: 116, totalTokens: 376 } },
  ]),
  bedrock('max-tokens.jsonl', [text('Hello'), text('! How can I assist you'), text(' today? If'), { type: 'finish', reason: 'length', rawReason: 'max_tokens', usage: { inputTokens: 2, outputTokens: 10, totalTokens: 12 } }]),
  bedrock('parallel-tools.jsonl', [
    text("I'll add an"),
    text('d multiply the numbers 2 and 3 for'),
    text(' you.'),
    { type: 'tool-call', id: 'tooluse_add_01GrN36E', name: 'add', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
    { type: 'tool-call', id: 'tooluse_mul_0113xQa4', name: 'multiply', arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}' },
    { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 502, outputTokens: 137, totalTokens: 639, cachedInputTokens: 0 } },
  ]),
  bedrock('invalid-tool-json.jsonl', [
    text("I'll check the current weather in Paris for you."),
    { type: 'tool-call', id: 'tooluse_NRLabsLy', name: 'get_weather', rawArguments: '{"location": "Paris", "unit": celsius}', error: invalidJson },
    { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use', usage: { inputTokens: 377, outputTokens: 65, totalTokens: 442 } },
  ]),
  bedrock('error-mid-stream.jsonl', [text('Let'), text(' me count the "'), text('r"s in "')], {
    error: { provider: 'bedrock-converse-stream', status: 500, type: 'modelStreamErrorException', message: 'Model Stream Error' },
  }),
];

const contentType: Record<ProviderName, string> = {
  'openai-chat': 'text/event-stream; charset=utf-8',
  'openai-responses': 'text/event-stream; charset=utf-8',
  'anthropic-messages': 'text/event-stream; charset=utf-8',
  gemini: 'text/event-stream',
  bedrock: 'application/vnd.amazon.eventstream',
};

const body = (c: { provider: ProviderName; file: string }): Buffer[] =>
  c.provider === 'bedrock' ? bedrockFrames(c.file) : [fixture(c.provider as ProviderFolder, c.file)];

describe('recorded provider transcripts over real HTTP, under every chunking', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());

  for (const c of cases) {
    describe(`${c.provider} ${c.file}`, () => {
      for (const chunking of c.chunkings) {
        it(chunking.name, async () => {
          fake.enqueue({ body: body(c), chunking, headers: { 'content-type': contentType[c.provider] } });
          const { events, error } = await collect(makeProvider(c.provider, fake.url).stream(request));
          expect(events).toEqual(c.events);
          if (c.error) {
            expect(error).toBeInstanceOf(LlmProviderError);
            expect({ provider: error.provider, status: error.status, type: error.type, message: error.message }).toEqual(c.error);
            expect(error.body).toBeDefined();
          } else {
            expect(error).toBeUndefined();
            expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
          }
        });
      }
    });
  }

  it('{ raw: true } adds the provider events, each before the events it produced, and changes nothing else', async () => {
    for (const c of cases.filter((x) => !x.error)) {
      fake.enqueue({ body: body(c), chunking: c.chunkings[0], headers: { 'content-type': contentType[c.provider] } });
      const { events, error } = await collect(makeProvider(c.provider, fake.url).stream(request, { raw: true }));
      expect(error).toBeUndefined();
      expect(events.filter((e) => e.type !== 'raw')).toEqual(c.events);
      expect(events[0].type).toBe('raw');
      expect(events.filter((e) => e.type === 'raw').every((e) => e.type === 'raw' && e.provider === makeProvider(c.provider, fake.url).name)).toBe(true);
    }
  });

  it('raw events carry the SSE event name and the parsed payload (Anthropic, ping included)', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'text.sse')] });
    const { events } = await collect(anthropicMessages({ apiKey: 'k', baseUrl: fake.url }).stream(request, { raw: true }));
    expect(events.slice(0, 4)).toEqual([
      { type: 'raw', provider: 'anthropic-messages', name: 'message_start', data: expect.objectContaining({ type: 'message_start' }) },
      { type: 'raw', provider: 'anthropic-messages', name: 'content_block_start', data: expect.objectContaining({ type: 'content_block_start' }) },
      { type: 'raw', provider: 'anthropic-messages', name: 'ping', data: { type: 'ping' } },
      { type: 'raw', provider: 'anthropic-messages', name: 'content_block_delta', data: expect.objectContaining({ delta: { type: 'text_delta', text: 'Hello' } }) },
    ]);
    expect(events[4]).toEqual(text('Hello'));
  });
});

describe('HTTP errors throw at the first next(), before any event', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());

  const errorCases: Array<{ provider: ProviderName; status: number; file: ProviderFolder; body: string; headers?: Record<string, string>; type: string; message: string }> = [
    { provider: 'openai-chat', status: 401, file: 'openai-chat', body: 'http-401.json', type: 'invalid_api_key', message: 'Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.' },
    { provider: 'openai-responses', status: 401, file: 'openai-responses', body: 'http-401.json', type: 'invalid_api_key', message: 'Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.' },
    { provider: 'anthropic-messages', status: 401, file: 'anthropic-messages', body: 'http-401.json', type: 'authentication_error', message: 'invalid x-api-key' },
    { provider: 'gemini', status: 400, file: 'gemini', body: 'http-400.json', type: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' },
    {
      provider: 'bedrock',
      status: 403,
      file: 'bedrock',
      body: 'http-403.json',
      headers: { 'x-amzn-errortype': 'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/' },
      type: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    },
  ];

  for (const c of errorCases) {
    it(`${c.provider}: ${c.status} ${c.type}`, async () => {
      const raw = fixture(c.file, c.body);
      fake.enqueue({ status: c.status, headers: { 'content-type': 'application/json', ...c.headers }, body: [raw] });
      const iterator = makeProvider(c.provider, fake.url).stream(request)[Symbol.asyncIterator]();
      const error = await iterator.next().then(
        (result) => ({ unexpected: result }),
        (e) => e,
      );
      expect(error).toBeInstanceOf(LlmProviderError);
      expect(error.status).toBe(c.status);
      expect(error.type).toBe(c.type);
      expect(error.message).toBe(c.message);
      expect(error.body).toEqual(JSON.parse(raw.toString('utf8')));
      expect(await iterator.next()).toEqual({ done: true, value: undefined });
    });
  }

  it('a non-JSON error body (a proxy page) keeps its text', async () => {
    fake.enqueue({ status: 502, headers: { 'content-type': 'text/html' }, body: [Buffer.from('<html>Bad gateway</html>')] });
    const { events, error } = await collect(openAiChat({ baseUrl: fake.url }).stream(request));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ name: 'LlmProviderError', provider: 'openai-chat', status: 502, type: 'http_502', message: 'HTTP 502: <html>Bad gateway</html>', body: '<html>Bad gateway</html>' });
  });

  it('a body cut before the end of the turn is an error, not a silent finish', async () => {
    const cut = fixture('anthropic-messages', 'text.sse').toString('utf8').split('event: message_delta')[0];
    fake.enqueue({ body: [Buffer.from(cut)] });
    const { events, error } = await collect(anthropicMessages({ baseUrl: fake.url }).stream(request));
    expect(events).toEqual([text('Hello'), text(' there'), text('!')]);
    expect(error).toMatchObject({ provider: 'anthropic-messages', type: 'incomplete_stream' });
  });

  it('a Bedrock frame cut in half by the end of the body is an error', async () => {
    const frames = bedrockFrames('text.jsonl');
    fake.enqueue({ body: [...frames.slice(0, 2), frames[2].subarray(0, 9)], headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    const { events, error } = await collect(makeProvider('bedrock', fake.url).stream(request));
    expect(events).toEqual([text('Let')]);
    expect(error).toMatchObject({ provider: 'bedrock-converse-stream', type: 'incomplete_stream' });
  });
});

describe('hostile Bedrock framing', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());

  it('a frame announcing more than 16 MiB is refused before anything is allocated for it', async () => {
    const [first] = bedrockFrames('text.jsonl');
    const hostile = Buffer.from([0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0]);
    fake.enqueue({ body: [first, hostile], headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    const { events, error } = await collect(makeProvider('bedrock', fake.url).stream(request));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ provider: 'bedrock-converse-stream', type: 'invalid_frame', message: 'An event stream frame announced 4294967280 bytes (allowed: 16 to 16777216)' });
  });

  it('a frame whose CRC does not match is an invalid_frame error after the events before it', async () => {
    const frames = bedrockFrames('text.jsonl');
    const corrupt = Buffer.from(frames[2]);
    corrupt[corrupt.length - 10] ^= 0xff;
    fake.enqueue({ body: [frames[0], frames[1], corrupt], headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    const { events, error } = await collect(makeProvider('bedrock', fake.url).stream(request));
    expect(events).toEqual([text('Let')]);
    expect(error).toMatchObject({ provider: 'bedrock-converse-stream', type: 'invalid_frame' });
  });
});
