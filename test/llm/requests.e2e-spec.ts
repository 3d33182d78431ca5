/**
 * What each adapter sends, as the fake provider received it over HTTP: path, auth headers and the
 * exact JSON body translated from the one request shape (system, tools with JSON Schema,
 * toolChoice, maxTokens, temperature, a conversation with tool calls and tool results, including
 * a failed one), and Bedrock's SigV4 signature checked by an independent implementation.
 */
import {
  anthropicMessages,
  bedrockConverseStream,
  geminiGenerateContent,
  openAiChat,
  openAiResponses,
  type LlmRequest,
} from '@nest-jsonrpc/llm';
import { collect } from './support/collect.js';
import { startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { bedrockFrames, fixture } from './support/fixtures.js';
import { verifySigV4 } from './support/sigv4-verifier.js';

const numbers = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] };

const conversation: LlmRequest = {
  model: 'm-1',
  system: 'You are terse.',
  messages: [
    { role: 'user', content: 'Add and multiply 2 and 3' },
    // An empty text beside tool calls is never sent as a block.
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_a', name: 'add', arguments: { a: 2, b: 3 } },
        { id: 'call_m', name: 'multiply', arguments: { a: 2, b: 3 } },
      ],
    },
    { role: 'tool', toolCallId: 'call_a', name: 'add', content: '5' },
    { role: 'tool', toolCallId: 'call_m', name: 'multiply', content: 'multiplier offline', isError: true },
    { role: 'user', content: 'And now?' },
  ],
  tools: [
    { name: 'add', description: 'Add two numbers', parameters: numbers },
    { name: 'multiply', parameters: numbers },
  ],
  toolChoice: 'required',
  maxTokens: 256,
  temperature: 0.2,
};

describe('request translation, as the provider receives it', () => {
  let fake: FakeProvider;
  beforeEach(async () => {
    fake = await startFakeProvider();
  });
  afterEach(() => fake.close());

  const sent = () => {
    expect(fake.requests).toHaveLength(1);
    return fake.requests[0];
  };

  it('openai-chat: POST {baseUrl}/chat/completions, bearer key, stream + include_usage, OpenAI messages and tools', async () => {
    fake.enqueue({ body: [fixture('openai-chat', 'text.sse')] });
    const { error } = await collect(openAiChat({ apiKey: 'sk-test', baseUrl: `${fake.url}/v1/`, headers: { 'x-extra': '1' } }).stream({ ...conversation, providerOptions: { seed: 7 } }));
    expect(error).toBeUndefined();
    const r = sent();
    expect(r.method).toBe('POST');
    expect(r.path).toBe('/v1/chat/completions');
    expect(r.headers).toMatchObject({ authorization: 'Bearer sk-test', 'content-type': 'application/json', accept: 'text/event-stream', 'x-extra': '1' });
    expect(r.json).toEqual({
      model: 'm-1',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Add and multiply 2 and 3' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
            { id: 'call_m', type: 'function', function: { name: 'multiply', arguments: '{"a":2,"b":3}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '5' },
        { role: 'tool', tool_call_id: 'call_m', content: 'multiplier offline' },
        { role: 'user', content: 'And now?' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        { type: 'function', function: { name: 'add', description: 'Add two numbers', parameters: numbers } },
        { type: 'function', function: { name: 'multiply', parameters: numbers } },
      ],
      tool_choice: 'required',
      max_tokens: 256,
      temperature: 0.2,
      seed: 7,
    });
  });

  it('openai-chat: max_completion_tokens on OpenAI itself, a named tool choice, no Authorization without a key', async () => {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    const recordingFetch = (async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response(fixture('openai-chat', 'length.sse').toString('utf8'), { headers: { 'content-type': 'text/event-stream' } });
    }) as unknown as typeof fetch;
    const previous = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      await collect(openAiChat({ fetch: recordingFetch }).stream({ ...conversation, toolChoice: { name: 'add' } }));
      expect(seen[0].url).toBe('https://api.openai.com/v1/chat/completions');
      const body = JSON.parse(String(seen[0].init.body));
      expect(body.max_completion_tokens).toBe(256);
      expect(body.max_tokens).toBeUndefined();
      expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'add' } });
      expect(seen[0].init.headers).not.toHaveProperty('authorization');
      process.env.OPENAI_API_KEY = 'sk-from-env';
      await collect(openAiChat({ fetch: recordingFetch, maxTokensField: 'max_tokens' }).stream(conversation));
      expect(seen[1].init.headers).toMatchObject({ authorization: 'Bearer sk-from-env' });
      expect(JSON.parse(String(seen[1].init.body)).max_tokens).toBe(256);
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });

  it('openai-responses: POST {baseUrl}/responses with instructions, input items, non-strict function tools', async () => {
    fake.enqueue({ body: [fixture('openai-responses', 'text.sse')] });
    const { error } = await collect(openAiResponses({ apiKey: 'sk-test', baseUrl: `${fake.url}/v1` }).stream(conversation));
    expect(error).toBeUndefined();
    const r = sent();
    expect(r.path).toBe('/v1/responses');
    expect(r.headers).toMatchObject({ authorization: 'Bearer sk-test' });
    expect(r.json).toEqual({
      model: 'm-1',
      input: [
        { role: 'user', content: 'Add and multiply 2 and 3' },
        { type: 'function_call', call_id: 'call_a', name: 'add', arguments: '{"a":2,"b":3}' },
        { type: 'function_call', call_id: 'call_m', name: 'multiply', arguments: '{"a":2,"b":3}' },
        { type: 'function_call_output', call_id: 'call_a', output: '5' },
        { type: 'function_call_output', call_id: 'call_m', output: 'multiplier offline' },
        { role: 'user', content: 'And now?' },
      ],
      stream: true,
      instructions: 'You are terse.',
      tools: [
        { type: 'function', name: 'add', description: 'Add two numbers', parameters: numbers, strict: false },
        { type: 'function', name: 'multiply', parameters: numbers, strict: false },
      ],
      tool_choice: 'required',
      max_output_tokens: 256,
      temperature: 0.2,
    });
  });

  it('anthropic-messages: x-api-key + anthropic-version, tool results in one user turn, is_error, no empty text block', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'text.sse')] });
    const { error } = await collect(anthropicMessages({ apiKey: 'sk-ant', baseUrl: fake.url }).stream(conversation));
    expect(error).toBeUndefined();
    const r = sent();
    expect(r.path).toBe('/v1/messages');
    expect(r.headers).toMatchObject({ 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    expect(r.headers.authorization).toBeUndefined();
    expect(r.json).toEqual({
      model: 'm-1',
      max_tokens: 256,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Add and multiply 2 and 3' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_a', name: 'add', input: { a: 2, b: 3 } },
            { type: 'tool_use', id: 'call_m', name: 'multiply', input: { a: 2, b: 3 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '5' },
            { type: 'tool_result', tool_use_id: 'call_m', content: 'multiplier offline', is_error: true },
            { type: 'text', text: 'And now?' },
          ],
        },
      ],
      stream: true,
      system: 'You are terse.',
      tools: [
        { name: 'add', description: 'Add two numbers', input_schema: numbers },
        { name: 'multiply', input_schema: numbers },
      ],
      tool_choice: { type: 'any' },
      temperature: 0.2,
    });
  });

  it('anthropic-messages: max_tokens defaults to 4096 (the API requires it)', async () => {
    fake.enqueue({ body: [fixture('anthropic-messages', 'text.sse')] });
    await collect(anthropicMessages({ apiKey: 'k', baseUrl: fake.url }).stream({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }));
    expect(sent().json).toEqual({ model: 'm', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: true });
  });

  it('gemini: x-goog-api-key, models/{model}:streamGenerateContent?alt=sse, functionResponse carries the tool name', async () => {
    fake.enqueue({ body: [fixture('gemini', 'text.sse')] });
    const { error } = await collect(geminiGenerateContent({ apiKey: 'gm-key', baseUrl: `${fake.url}/v1beta` }).stream(conversation));
    expect(error).toBeUndefined();
    const r = sent();
    expect(r.path).toBe('/v1beta/models/m-1:streamGenerateContent?alt=sse');
    expect(r.headers).toMatchObject({ 'x-goog-api-key': 'gm-key' });
    expect(r.json).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Add and multiply 2 and 3' }] },
        { role: 'model', parts: [{ functionCall: { name: 'add', args: { a: 2, b: 3 } } }, { functionCall: { name: 'multiply', args: { a: 2, b: 3 } } }] },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'add', response: { output: '5' } } },
            { functionResponse: { name: 'multiply', response: { error: 'multiplier offline' } } },
            { text: 'And now?' },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      tools: [
        {
          functionDeclarations: [
            { name: 'add', description: 'Add two numbers', parametersJsonSchema: numbers },
            { name: 'multiply', parametersJsonSchema: numbers },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: { maxOutputTokens: 256, temperature: 0.2 },
    });
  });

  it("gemini: a call's own id and thoughtSignature travel back (required by thinking models)", async () => {
    fake.enqueue({ body: [fixture('gemini', 'text.sse')] });
    await collect(
      geminiGenerateContent({ apiKey: 'k', baseUrl: fake.url }).stream({
        model: 'models/gemini-3-pro',
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', toolCalls: [{ id: 'fc-1', name: 'weather', arguments: { city: 'Rome' }, providerMetadata: { gemini: { id: 'fc-1', thoughtSignature: 'c2ln' } } }] },
          { role: 'tool', toolCallId: 'fc-1', name: 'weather', content: '{"c":21}' },
        ],
        toolChoice: { name: 'weather' },
        tools: [{ name: 'weather', parameters: { type: 'object' } }],
      }),
    );
    const r = sent();
    expect(r.path).toBe('/models/gemini-3-pro:streamGenerateContent?alt=sse');
    expect(r.json.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [{ functionCall: { id: 'fc-1', name: 'weather', args: { city: 'Rome' } }, thoughtSignature: 'c2ln' }] },
      { role: 'user', parts: [{ functionResponse: { id: 'fc-1', name: 'weather', response: { output: '{"c":21}' } } }] },
    ]);
    expect(r.json.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } });
  });

  it('bedrock: Converse body, model id encoded in the path, SigV4 for service bedrock over the host with its non-default port', async () => {
    fake.enqueue({ body: bedrockFrames('text.jsonl'), headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    const provider = bedrockConverseStream({
      baseUrl: fake.url,
      region: 'eu-central-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' },
    });
    const { events, error } = await collect(provider.stream({ ...conversation, model: 'anthropic.claude-3-haiku-20240307-v1:0' }));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    const r = sent();
    expect(r.path).toBe('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream');
    expect(r.headers.host).toBe(`127.0.0.1:${fake.port}`);
    expect(r.headers['x-amz-security-token']).toBe('session-token');
    const check = verifySigV4(r, 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY');
    expect(check).toMatchObject({ valid: true, accessKeyId: 'AKIDEXAMPLE', region: 'eu-central-1', service: 'bedrock' });
    expect(check.signedHeaders).toEqual(expect.arrayContaining(['host', 'content-type', 'x-amz-date', 'x-amz-security-token']));
    // A wrong secret does not verify: the check can fail.
    expect(verifySigV4(r, 'another-secret').valid).toBe(false);
    expect(r.json).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Add and multiply 2 and 3' }] },
        {
          role: 'assistant',
          content: [{ toolUse: { toolUseId: 'call_a', name: 'add', input: { a: 2, b: 3 } } }, { toolUse: { toolUseId: 'call_m', name: 'multiply', input: { a: 2, b: 3 } } }],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'call_a', content: [{ text: '5' }], status: 'success' } },
            { toolResult: { toolUseId: 'call_m', content: [{ text: 'multiplier offline' }], status: 'error' } },
            { text: 'And now?' },
          ],
        },
      ],
      system: [{ text: 'You are terse.' }],
      toolConfig: {
        tools: [
          { toolSpec: { name: 'add', description: 'Add two numbers', inputSchema: { json: numbers } } },
          { toolSpec: { name: 'multiply', inputSchema: { json: numbers } } },
        ],
        toolChoice: { any: {} },
      },
      inferenceConfig: { maxTokens: 256, temperature: 0.2 },
    });
  });

  it('bedrock: credentials and region from the standard AWS variables; a Bedrock API key is a bearer token instead', async () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, { AWS_REGION: 'us-west-2', AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'env-secret' });
      delete process.env.AWS_SESSION_TOKEN;
      delete process.env.AWS_BEARER_TOKEN_BEDROCK;
      fake.enqueue({ body: bedrockFrames('max-tokens.jsonl') }, { body: bedrockFrames('max-tokens.jsonl') });
      await collect(bedrockConverseStream({ baseUrl: fake.url }).stream({ model: 'amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'Hi' }] }));
      expect(verifySigV4(fake.requests[0], 'env-secret')).toMatchObject({ valid: true, accessKeyId: 'AKIDENV', region: 'us-west-2' });
      expect(fake.requests[0].headers['x-amz-security-token']).toBeUndefined();
      await collect(bedrockConverseStream({ baseUrl: fake.url, apiKey: 'bedrock-api-key' }).stream({ model: 'amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'Hi' }] }));
      expect(fake.requests[1].headers.authorization).toBe('Bearer bedrock-api-key');
      expect(fake.requests[1].headers['x-amz-date']).toBeUndefined();
    } finally {
      process.env = saved;
    }
  });

  it('bedrock: no region is a clear error at construction; no credentials a clear error at the first next()', async () => {
    const saved = { ...process.env };
    try {
      for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_BEARER_TOKEN_BEDROCK']) delete process.env[name];
      expect(() => bedrockConverseStream({ baseUrl: fake.url })).toThrow('bedrockConverseStream needs a region: pass { region } or set AWS_REGION');
      const iterator = bedrockConverseStream({ baseUrl: fake.url, region: 'us-east-1' }).stream(conversation)[Symbol.asyncIterator]();
      await expect(iterator.next()).rejects.toThrow(/bedrockConverseStream needs credentials/);
      expect(fake.requests).toHaveLength(0);
    } finally {
      process.env = saved;
    }
  });
});
