/**
 * One method, two kinds of tool: an MCP tool (`tools/list`, `tools/call` on POST /mcp) and an LLM
 * tool (`RpcToolset`, called from an RPC handler) are described by the same description and
 * argument schema and run through the same code (libs/server/src/method-tools/): the same
 * result, the same cached value, the same rows pulled and the same producer stopped.
 */
import { Injectable, Module } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { JsonRpcModule, RpcCache, RpcMcp, RpcMethod, RpcParams, RpcStream, RpcToolset, type RpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { mcpRequest, postMcp } from './support/mcp-wire.js';

class Place {
  @IsString() city!: string;
}

class TripDto {
  @ValidateNested() @Type(() => Place) from!: Place;
  @IsOptional() @IsInt() days?: number;
}

class CountDto {
  @IsInt() @Min(1) @Max(1000) count!: number;
}

const runs = { plan: 0, cached: 0, stopped: 0 };

@Injectable()
class TripMethods {
  @RpcMethod('trip.plan', { description: 'Plans a trip.' })
  @RpcMcp()
  plan(@RpcParams() p: TripDto) {
    runs.plan++;
    return { from: p.from.city, days: p.days ?? 1 };
  }

  @RpcMethod('trip.summary', { summary: 'Summed up.' })
  @RpcMcp({ description: 'Written for agents.' })
  summary() {
    return 'ok';
  }

  @RpcMethod('trip.bare')
  @RpcMcp()
  bare() {
    return null;
  }

  @RpcMethod('trip.cached', { summary: 'Cached for a minute.' })
  @RpcCache({ ttl: 60 })
  @RpcMcp()
  cached() {
    return { run: ++runs.cached };
  }

  @RpcMethod('trip.words')
  @RpcStream()
  @RpcMcp()
  async *words(p: CountDto) {
    try {
      for (let i = 0; i < p.count; i++) yield { delta: `w${i} ` };
    } finally {
      runs.stopped++;
    }
  }
}

const METHODS = ['trip.plan', 'trip.summary', 'trip.bare', 'trip.cached', 'trip.words'];

@Injectable()
class ToolsetProbe {
  constructor(private readonly toolset: RpcToolset) {}

  /** The toolset's view of `METHODS`, and with `call` the value of one tool call. */
  @RpcMethod('probe.tools')
  async probe(p: { call?: { method: string; arguments?: unknown }; maxStreamRows?: number }, ctx: RpcContext) {
    const tools = this.toolset.tools(METHODS, ctx, { maxStreamRows: p.maxStreamRows });
    const listed = tools.map(({ method, description, parameters }) => ({ method, description, parameters }));
    if (!p.call) return { tools: listed };
    return { result: await tools.find((tool) => tool.method === p.call!.method)!.execute(p.call.arguments, { toolCallId: 'call_1' }) };
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, mcp: { enabled: true } })],
  providers: [TripMethods, ToolsetProbe],
})
class ToolsModule {}

describe('a method as an MCP tool and as an LLM tool', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(ToolsModule);
  });
  afterAll(() => t?.close());

  const probe = async (params: Record<string, unknown> = {}) => {
    const { body } = await t.rpc({ jsonrpc: '2.0', method: 'probe.tools', params, id: 1 });
    expect(body.error).toBeUndefined();
    return body.result;
  };
  const mcp = async (method: string, params: Record<string, unknown> = {}) => {
    const { status, body } = await postMcp(`${t.url}/mcp`, mcpRequest('2025', 1, method, params));
    expect(status).toBe(200);
    return body.result;
  };

  it('tools/list and RpcToolset give each method the same description and argument schema', async () => {
    const { tools: mcpTools } = await mcp('tools/list');
    const { tools: llmTools } = await probe();
    const fromMcp = Object.fromEntries(mcpTools.map((tool: any) => [tool.name, { description: tool.description, schema: tool.inputSchema }]));
    const fromToolset = Object.fromEntries(llmTools.map((tool: any) => [tool.method, { description: tool.description, schema: tool.parameters }]));
    expect(Object.keys(fromToolset)).toEqual(METHODS);
    expect(fromMcp).toEqual(fromToolset);
    // What they agree on, spelled out: a DTO with a nested DTO under $defs, and each description rule.
    expect(fromToolset['trip.plan']).toEqual({
      description: 'Plans a trip.',
      schema: {
        type: 'object',
        properties: { from: { $ref: '#/$defs/Place' }, days: { type: ['integer', 'null'] } },
        additionalProperties: false,
        $defs: { Place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
      },
    });
    expect(fromToolset['trip.summary'].description).toBe('Written for agents.');
    expect(fromToolset['trip.bare'].description).toBe('Calls the JSON-RPC method "trip.bare".');
    expect(fromToolset['trip.cached'].description).toBe('Cached for a minute.');
  });

  it('a plain method answers the same value both ways, and its handler runs once per call', async () => {
    const before = runs.plan;
    const args = { from: { city: 'Porto' }, days: 3 };
    const viaMcp = await mcp('tools/call', { name: 'trip.plan', arguments: args });
    const viaToolset = await probe({ call: { method: 'trip.plan', arguments: args } });
    expect(viaMcp.structuredContent ?? JSON.parse(viaMcp.content[0].text)).toEqual({ from: 'Porto', days: 3 });
    expect(viaToolset.result).toEqual({ from: 'Porto', days: 3 });
    expect(runs.plan).toBe(before + 2);
  });

  it('a cached result (kept as JSON text) comes back as the same value both ways', async () => {
    // The same params (`{}`) make the same cache key, whichever tool asks.
    const first = await probe({ call: { method: 'trip.cached', arguments: {} } });
    const viaMcp = await mcp('tools/call', { name: 'trip.cached', arguments: {} });
    expect(first.result).toEqual({ run: 1 });
    expect(JSON.parse(viaMcp.content[0].text)).toEqual({ run: 1 });
    expect(runs.cached).toBe(1);
  });

  it('a live stream is drained by the same loop: every row pulled, or the producer stopped at the bound', async () => {
    const viaMcp = await mcp('tools/call', { name: 'trip.words', arguments: { count: 3 } });
    expect(JSON.parse(viaMcp.content[0].text)).toBe('w0 w1 w2 ');
    const viaToolset = await probe({ call: { method: 'trip.words', arguments: { count: 3 } } });
    expect(viaToolset.result).toEqual({ rows: [{ delta: 'w0 ' }, { delta: 'w1 ' }, { delta: 'w2 ' }] });
    expect(runs.stopped).toBe(2);

    const truncated = await probe({ call: { method: 'trip.words', arguments: { count: 1000 } }, maxStreamRows: 2 });
    expect(truncated.result).toEqual({ rows: [{ delta: 'w0 ' }, { delta: 'w1 ' }], truncated: true });
    // The generator's `finally` ran: the producer was stopped, not left suspended.
    expect(runs.stopped).toBe(3);
  });
});
