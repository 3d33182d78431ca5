/**
 * The same methods written four ways — a class-validator DTO, zod 4, Valibot 1 and ArkType 2 — so
 * the suites can check that each style gives the same results, the same -32602 data shape and
 * equivalent descriptions on every transport. Method names are `<style>.<method>`.
 */
import { Injectable, Module, type Type as ClassType } from '@nestjs/common';
import { toJsonSchema, toStandardJsonSchema } from '@valibot/to-json-schema';
import { scope, type } from 'arktype';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsEmail, IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import * as v from 'valibot';
import { z } from 'zod';
import {
  JsonRpcModule,
  MemoryStreamStore,
  RpcCtx,
  RpcMcp,
  RpcMethod,
  RpcParam,
  RpcParams,
  RpcStream,
  RpcToolError,
  RpcToolset,
  type JsonRpcModuleOptions,
  type RpcContext,
  type RpcSchemaOutput,
} from '@nest-jsonrpc/server';
import type { StandardSchemaV1 } from '@standard-schema/spec';

export const STYLES = ['dto', 'zod', 'valibot', 'arktype'] as const;
export const LIBRARIES = ['zod', 'valibot', 'arktype'] as const;
export type Style = (typeof STYLES)[number];
export type Library = (typeof LIBRARIES)[number];

// ---- the DTO style -------------------------------------------------------------------------

export class LineDto {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

export class OrderDto {
  @IsEmail() email!: string;
  @IsOptional() @IsInt() @Min(0) @Max(10) priority: number = 3;
  @ArrayMinSize(1) @ValidateNested({ each: true }) @Type(() => LineDto) lines!: LineDto[];
  @IsOptional() @IsString() note?: string | null;
}

export class OrderSummaryDto {
  @IsEmail() email!: string;
  @IsInt() priority!: number;
  @IsInt() lines!: number;
  @IsInt() units!: number;
  @IsOptional() @IsString() note!: string | null;
}

// ---- the same shapes in each library ---------------------------------------------------------

/** Usernames a signup refuses (what an async refinement would look up). */
export const TAKEN = new Set(['ada']);
/** A username whose lookup fails: the refinement throws. */
export const LOOKUP_FAILS = 'boom';

const lookup = async (username: string): Promise<boolean> => {
  await new Promise((resolve) => setImmediate(resolve));
  if (username === LOOKUP_FAILS) throw new Error('the user directory is down');
  return !TAKEN.has(username);
};

type Tree = { child?: Tree };
const zodTree: z.ZodType<Tree> = z.object({
  get child() {
    return zodTree.optional();
  },
});

const zodLine = z.strictObject({ sku: z.string(), qty: z.number().int().min(1) });
const zodKit = {
  order: z.strictObject({
    email: z.email(),
    priority: z.number().int().min(0).max(10).default(3),
    lines: z.array(zodLine).min(1),
    note: z.string().nullish(),
  }),
  line: zodLine,
  summary: z.object({ email: z.string(), priority: z.number().int(), lines: z.number().int(), units: z.number().int(), note: z.string().nullable() }),
  name: z.string().trim().min(1),
  times: z.number().int().min(1).default(1),
  tree: z.object({ tree: zodTree }),
  signup: z.object({
    username: z.string().trim().toLowerCase().refine(lookup, 'Username is taken'),
    contact: z.discriminatedUnion('kind', [z.object({ kind: z.literal('email'), email: z.email() }), z.object({ kind: z.literal('phone'), phone: z.string().regex(/^[0-9]+$/) })]),
    nickname: z.string().optional(),
    referrer: z.string().nullable(),
    tags: z.array(z.string()).default([]),
  }),
};

const valibotName = v.pipe(v.string(), v.trim(), v.minLength(1));
const valibotSignup = v.objectAsync({
  username: v.pipeAsync(v.string(), v.trim(), v.toLowerCase(), v.checkAsync(lookup, 'Username is taken')),
  contact: v.variant('kind', [v.object({ kind: v.literal('email'), email: v.pipe(v.string(), v.email()) }), v.object({ kind: v.literal('phone'), phone: v.pipe(v.string(), v.regex(/^[0-9]+$/)) })]),
  nickname: v.optional(v.string()),
  referrer: v.nullable(v.string()),
  tags: v.optional(v.array(v.string()), []),
});
/**
 * Valibot's converter refuses actions it cannot express (`trim`, `toLowerCase`, `checkAsync`), so
 * these schemas are described by the JSON Schema the `jsonSchema` option gives: the converter's
 * own, told to leave such actions out.
 */
const lenient = (schema: object) => toJsonSchema(schema as never, { typeMode: 'input', errorMode: 'ignore' }) as Record<string, unknown>;

const valibotTree: v.GenericSchema<Tree> = v.object({ child: v.optional(v.lazy(() => valibotTree)) });

const valibotLine = v.strictObject({ sku: v.string(), qty: v.pipe(v.number(), v.integer(), v.minValue(1)) });
const valibotKit = {
  order: toStandardJsonSchema(
    v.strictObject({
      email: v.pipe(v.string(), v.email()),
      priority: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)), 3),
      lines: v.pipe(v.array(valibotLine), v.minLength(1)),
      note: v.nullish(v.string()),
    }),
  ),
  line: toStandardJsonSchema(valibotLine),
  summary: toStandardJsonSchema(v.object({ email: v.string(), priority: v.pipe(v.number(), v.integer()), lines: v.pipe(v.number(), v.integer()), units: v.pipe(v.number(), v.integer()), note: v.nullable(v.string()) })),
  name: valibotName,
  nameJsonSchema: lenient(valibotName),
  times: toStandardJsonSchema(v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1)),
  tree: toStandardJsonSchema(v.object({ tree: valibotTree })),
  signup: valibotSignup,
  signupJsonSchema: lenient(valibotSignup),
};

const arkTree = scope({ tree: { 'child?': 'tree' } }).export().tree;

const arkLine = type({ sku: 'string', qty: 'number.integer >= 1', '+': 'reject' });
const arktypeKit = {
  order: type({
    email: 'string.email',
    priority: type('0 <= number.integer <= 10').default(3),
    lines: arkLine.array().atLeastLength(1),
    'note?': 'string | null',
    '+': 'reject',
  }),
  line: arkLine,
  // '+': 'delete' drops undeclared keys from the output, as zod's and Valibot's objects do.
  summary: type({ email: 'string', priority: 'number.integer', lines: 'number.integer', units: 'number.integer', note: 'string | null', '+': 'delete' }),
  name: type('string').pipe((s) => s.trim()).to('string > 0'),
  times: type('number.integer >= 1'),
  tree: type({ tree: arkTree }),
  // ArkType validates synchronously: its "lookup" is a synchronous narrow, which may throw too.
  signup: type({
    username: type('string')
      .pipe((s) => s.trim().toLowerCase())
      .narrow((s, ctx) => {
        if (s === LOOKUP_FAILS) throw new Error('the user directory is down');
        return !TAKEN.has(s) || ctx.reject({ message: 'Username is taken' });
      }),
    contact: type({ kind: "'email'", email: 'string.email' }).or({ kind: "'phone'", phone: /^[0-9]+$/ }),
    'nickname?': 'string',
    referrer: 'string | null',
    tags: type('string[]').default(() => []),
  }),
};

/** What every library's kit has; `*JsonSchema` describe a schema its converter refuses. */
interface Kit {
  order: StandardSchemaV1;
  line: StandardSchemaV1;
  summary: StandardSchemaV1;
  name: StandardSchemaV1;
  nameJsonSchema?: Record<string, unknown>;
  times: StandardSchemaV1;
  signup: StandardSchemaV1;
  signupJsonSchema?: Record<string, unknown>;
  tree: StandardSchemaV1;
}

export const KITS: Readonly<Record<Library, Kit>> = { zod: zodKit, valibot: valibotKit, arktype: arktypeKit };

type Order = { email: string; priority: number; lines: Array<{ sku: string; qty: number }>; note?: string | null };

function summary(p: Order) {
  return { email: p.email, priority: p.priority, lines: p.lines.length, units: p.lines.reduce((n, l) => n + l.qty, 0), note: p.note ?? null };
}

async function* linesOf(p: Order) {
  for (const line of p.lines) yield { sku: line.sku, qty: line.qty };
}

/** The libraries whose `<library>.rows.bad` producer ran its `finally` (it was stopped). */
export const ROWS_STOPPED = new Set<string>();

/** What `<style>.result.bad` / `<style>.rows.bad` return when asked: a value their schema refuses. */
const BAD_SUMMARY = { email: 'a@b.example', priority: 'high', lines: 1, units: 1, note: null };

// ---- the methods ------------------------------------------------------------------------------

@Injectable()
export class DtoMethods {
  @RpcMethod('dto.order.create', { result: OrderSummaryDto, description: 'Places an order.' })
  @RpcMcp()
  create(p: OrderDto) {
    return summary(p);
  }

  @RpcMethod('dto.order.lines')
  @RpcStream({ row: LineDto })
  lines(@RpcParams() p: OrderDto) {
    return linesOf(p);
  }

  @RpcMethod('dto.order.track')
  @RpcStream({ durable: true, row: LineDto })
  track(@RpcParams() p: OrderDto) {
    return linesOf(p);
  }

  @RpcMethod('dto.greet')
  greet(@RpcParam('name') name: string, @RpcParam('times', { default: 1 }) times: number) {
    return `${name} `.repeat(times).trim();
  }
}

/** The schema methods of one library: the same decorators, its kit's schemas. */
function schemaMethods(library: Library) {
  const kit = KITS[library];
  @Injectable()
  class SchemaMethods {
    @RpcMethod(`${library}.order.create`, { params: kit.order, result: kit.summary, description: 'Places an order.' })
    @RpcMcp()
    create(p: RpcSchemaOutput<typeof zodKit.order>) {
      return summary(p);
    }

    @RpcMethod(`${library}.order.lines`)
    @RpcStream({ row: kit.line })
    lines(@RpcParams({ schema: kit.order }) p: Order) {
      return linesOf(p);
    }

    @RpcMethod(`${library}.order.track`)
    @RpcStream({ durable: true, row: kit.line })
    track(@RpcParams({ schema: kit.order }) p: Order) {
      return linesOf(p);
    }

    @RpcMethod(`${library}.greet`)
    greet(@RpcParam('name', { schema: kit.name, jsonSchema: kit.nameJsonSchema }) name: string, @RpcParam('times', { schema: kit.times, ...(library === 'arktype' && { default: 1 }) }) times: number) {
      return `${name} `.repeat(times).trim();
    }

    @RpcMethod(`${library}.signup`, { params: kit.signup, jsonSchema: { params: kit.signupJsonSchema } })
    @RpcMcp()
    signup(p: unknown) {
      return p;
    }

    @RpcMethod(`${library}.tree.depth`, { params: kit.tree })
    depth(p: { tree: Tree }) {
      let depth = 0;
      for (let node: Tree | undefined = p.tree; node; node = node.child) depth++;
      return depth;
    }

    @RpcMethod(`${library}.result.bad`, { result: kit.summary })
    resultBad(@RpcParam('extra', { optional: true }) extra?: boolean) {
      return extra ? { ...summary({ email: 'a@b.example', priority: 1, lines: [{ sku: 's', qty: 2 }] }), secret: 'kept out' } : BAD_SUMMARY;
    }

    @RpcMethod(`${library}.rows.bad.durable`)
    @RpcStream({ durable: true, row: kit.line })
    async *rowsBadDurable() {
      yield { sku: 'first', qty: 1 };
      yield { sku: 'second', qty: 0 };
    }

    @RpcMethod(`${library}.rows.bad`)
    @RpcStream({ row: kit.line })
    async *rowsBad() {
      try {
        yield { sku: 'first', qty: 1 };
        yield { sku: 'second', qty: 0 };
        yield { sku: 'never', qty: 1 };
      } finally {
        ROWS_STOPPED.add(library);
      }
    }
  }
  return SchemaMethods;
}

/** Runs another method as an LLM tool of the caller (`RpcToolset`), answering what the model would read. */
@Injectable()
export class ToolRunner {
  constructor(private readonly toolset: RpcToolset) {}

  @RpcMethod('tool.describe')
  describe(@RpcParam('method') method: string, @RpcCtx() ctx: RpcContext): Record<string, unknown> {
    return this.toolset.tools([method], ctx)[0].parameters;
  }

  @RpcMethod('tool.run')
  async run(@RpcParam('method') method: string, @RpcParam('args') args: Record<string, unknown>, @RpcCtx() ctx: RpcContext) {
    const [tool] = this.toolset.tools([method], ctx);
    try {
      return { result: await tool.execute(args) };
    } catch (error) {
      if (error instanceof RpcToolError) return { error: error.error, text: error.message };
      throw error;
    }
  }
}

export const SCHEMA_METHOD_CLASSES = [DtoMethods, ...LIBRARIES.map(schemaMethods), ToolRunner];

/** The module of the suites: every style's methods, streams, durable streams, MCP with REST. */
export function schemaAppModule(options: JsonRpcModuleOptions = {}): ClassType<unknown> {
  @Module({
    imports: [
      JsonRpcModule.forRoot({
        stream: { enabled: true },
        durable: { enabled: true, store: new MemoryStreamStore() },
        openrpc: { enabled: true, info: { title: 'schema styles', version: '1.0.0' } },
        mcp: { enabled: true, rest: true },
        ...options,
      }),
    ],
    providers: SCHEMA_METHOD_CLASSES,
  })
  class SchemaAppModule {}
  return SchemaAppModule;
}
