import type { ClassConstructor } from 'class-transformer';
import type { RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RpcArgsResolver, RpcContext } from '../context/rpc-context.js';
import type { RpcJsonSchema } from '../decorators/rpc-method.js';
import type { RpcArgMetadata } from '../decorators/rpc-params.js';
import { isStandardSchema, type StandardSchemaV1 } from '../decorators/standard-schema.js';
import { RpcInvalidParamsException } from '../errors/rpc-exceptions.js';
import { declaresValidation, DtoBinder } from './dto-binder.js';
import type { ParamViolation } from './param-violation.js';
import { appendSchemaIssues, isPendingResult, StandardSchemaCheck } from './standard-schema-check.js';

/** What one handler argument receives. */
type ArgSource =
  | { kind: 'ctx' }
  | { kind: 'raw' }
  /** A custom parameter decorator (`createParamDecorator`): Nest's param pipeline fills it. */
  | { kind: 'external' }
  | { kind: 'dto'; binder: DtoBinder; positional: readonly string[] | null }
  | {
      kind: 'param';
      name: string;
      position: number;
      optional: boolean;
      defaultValue: unknown;
      hasDefault: boolean;
      type: unknown;
      check: ValueCheck;
      /**
       * A test that, when it passes, means `check` would return the value as is and report
       * nothing (a primitive type's test — `typeof`, or `Array.isArray` for arrays — or no check at all): the per-call path then skips
       * `check` and the violations list it writes to. Undefined: always run `check`.
       */
      accepts: ((value: unknown) => boolean) | undefined;
      /** `@RpcParam(name, { schema })`: validates the value instead of `check`. */
      schema: StandardSchemaCheck | undefined;
      jsonSchema: RpcJsonSchema | undefined;
    };

/** A `@RpcParam` schema whose library answered with a Promise: settled before the handler runs. */
interface PendingParam {
  readonly index: number;
  readonly name: string;
  readonly result: Promise<StandardSchemaV1.Result<unknown>>;
}

/**
 * How a method takes its params, for describing them (the schema builder): a Standard Schema of the
 * whole params, a DTO bound to the whole params, named `@RpcParam`s in positional order, raw
 * params, or none (the handler declares no parameter to receive them; what a client sends anyway
 * reaches no argument).
 */
export type ParamsShape =
  | { kind: 'schema'; schema: StandardSchemaV1; jsonSchema: RpcJsonSchema | undefined }
  | { kind: 'dto'; dtoClass: ClassConstructor<object>; positional: boolean }
  | { kind: 'named'; params: readonly NamedParamShape[] }
  | { kind: 'raw' }
  | { kind: 'none' };

export interface NamedParamShape {
  name: string;
  type: unknown;
  optional: boolean;
  hasDefault: boolean;
  defaultValue: unknown;
  schema: StandardSchemaV1 | undefined;
  jsonSchema: RpcJsonSchema | undefined;
}

/** Checks one named param's value; returns the value to pass (a DTO instance for classes). */
type ValueCheck = (value: unknown, path: string, out: ParamViolation[]) => unknown;

export interface ParamPlanInput {
  method: string;
  /** `design:paramtypes` of the handler, when TypeScript emitted it. */
  paramTypes: readonly unknown[];
  /** What the RPC param decorators recorded, or none. */
  args: readonly RpcArgMetadata[];
  /** Indexes of parameters with a custom decorator (`createParamDecorator`); they claim no params key. */
  externalArgs?: readonly number[];
  rejectUnknown: boolean;
  allowPositional: boolean;
  /** The context class, so an undecorated `(params, ctx: RpcContext)` is not mistaken for a DTO. */
  contextClass: unknown;
  /** `@RpcMethod(name, { params })` when it is a Standard Schema: validates the whole params first. */
  paramsSchema?: StandardSchemaV1;
  /** `@RpcMethod(name, { jsonSchema: { params } })`: describes the params schema instead of itself. */
  paramsJsonSchema?: RpcJsonSchema;
}

const PRIMITIVE_CHECKS = new Map<unknown, { code: string; noun: string; test: (v: unknown) => boolean }>([
  [Number, { code: 'isNumber', noun: 'a number', test: (v) => typeof v === 'number' }],
  [String, { code: 'isString', noun: 'a string', test: (v) => typeof v === 'string' }],
  [Boolean, { code: 'isBoolean', noun: 'a boolean', test: (v) => typeof v === 'boolean' }],
  [Array, { code: 'isArray', noun: 'an array', test: (v) => Array.isArray(v) }],
]);

/** Types that say nothing about the value (`any`, interfaces, unions) and so are not checked. */
const UNCHECKED_TYPES = new Set<unknown>([undefined, Object, Function, Promise, Symbol, Date, BigInt]);

export function isDtoClass(type: unknown, contextClass?: unknown): type is ClassConstructor<object> {
  return typeof type === 'function' && !UNCHECKED_TYPES.has(type) && !PRIMITIVE_CHECKS.has(type) && type !== contextClass;
}

/**
 * How a method turns `params` into handler arguments. Built once per method at startup; `resolve`
 * is the per-call path and throws RpcInvalidParamsException with every violation found.
 *
 * A params schema (`@RpcMethod(name, { params })` or `@RpcParams({ schema })`) validates the whole
 * params first; every argument then reads the schema's output. A Standard Schema may answer with
 * a Promise (an async refinement): `resolve` then returns a Promise of the arguments.
 */
export class ParamPlan implements RpcArgsResolver {
  private readonly sources: readonly ArgSource[];
  /** JSON keys claimed by `@RpcParam`s, when unknown keys must be rejected. */
  private readonly knownKeys: ReadonlySet<string> | null;
  private readonly positionalCount: number;
  private readonly namedOnlyDto: boolean;
  /** The whole-params schema, and what describes it instead of itself. */
  private readonly paramsCheck: StandardSchemaCheck | undefined;
  private readonly paramsJsonSchema: RpcJsonSchema | undefined;
  /** Two sources of params that disagree, or a schema option that is not one, for the startup check. */
  private readonly problemList: string[] = [];

  constructor(private readonly input: ParamPlanInput) {
    const { args, paramTypes, contextClass, rejectUnknown, allowPositional } = input;
    const external = new Set(input.externalArgs ?? []);
    const sources: ArgSource[] = [];
    for (const index of external) sources[index] = { kind: 'external' };
    const wholeSchema = this.wholeParamsSchema(args, paramTypes, contextClass);
    this.paramsCheck = wholeSchema.schema ? new StandardSchemaCheck(wholeSchema.schema) : undefined;
    this.paramsJsonSchema = wholeSchema.jsonSchema;
    if (this.paramsCheck && allowPositional) {
      this.problemList.push('allowPositional maps array items onto a DTO\'s properties; a params schema takes params as sent (remove one)');
    }
    const paramsSource = (type: unknown, index: number): ArgSource => {
      if (!isDtoClass(type, contextClass)) return { kind: 'raw' };
      if (this.paramsCheck) {
        if (declaresValidation(type)) this.problemList.push(`argument ${index} is a DTO (${type.name}) and the method has a params schema: params take one source, the DTO or the schema`);
        return { kind: 'raw' };
      }
      return this.dtoSource(type, rejectUnknown, allowPositional);
    };
    if (args.length === 0) {
      // Undecorated: the first parameter without a decorator takes params (bound when its type is a
      // DTO class), the next one the context.
      let index = 0;
      for (const next of ['params', 'ctx'] as const) {
        while (external.has(index)) index++;
        sources[index] = next === 'ctx' ? { kind: 'ctx' } : paramsSource(paramTypes[index], index);
        index++;
      }
    } else {
      let position = 0;
      const sorted = [...args].sort((a, b) => a.index - b.index);
      for (const arg of sorted) {
        const type = paramTypes[arg.index];
        if (arg.kind === 'ctx') sources[arg.index] = { kind: 'ctx' };
        // `@RpcParams({ schema })` receives the schema's output: the whole-params schema was found above.
        else if (arg.kind === 'params') sources[arg.index] = arg.options?.schema ? { kind: 'raw' } : paramsSource(type, arg.index);
        else sources[arg.index] = this.namedSource(arg, type, position++, rejectUnknown);
      }
    }
    for (let i = 0; i < sources.length; i++) sources[i] ??= { kind: 'raw' };
    this.sources = Object.freeze(sources);
    const params = sources.filter((s): s is Extract<ArgSource, { kind: 'param' }> => s.kind === 'param');
    const claimsWhole = sources.some((s) => s.kind === 'dto' || s.kind === 'raw');
    // A params schema decides about unknown keys itself (zod strips them, `z.strictObject` refuses them).
    this.knownKeys = rejectUnknown && !claimsWhole && !this.paramsCheck ? new Set(params.map((p) => p.name)) : null;
    this.positionalCount = params.length;
    this.namedOnlyDto = sources.some((s) => s.kind === 'dto' && s.positional === null);
  }

  get argumentCount(): number {
    return this.sources.length;
  }

  /** JSON keys each argument claims, for the startup check that no key is claimed twice. */
  claimedKeys(): Array<{ argIndex: number; keys: readonly string[] }> {
    return this.sources.flatMap((s, argIndex) => {
      if (s.kind === 'param') return [{ argIndex, keys: [s.name] }];
      if (s.kind === 'dto') return [{ argIndex, keys: s.binder.declaredProperties() }];
      return [];
    });
  }

  /**
   * What the startup check refuses: param sources that disagree (a DTO and a schema for the same
   * params), a `schema` that is not a Standard Schema, a `jsonSchema` with no schema to describe.
   */
  problems(): readonly string[] {
    return this.problemList;
  }

  /** How the method takes its params, for its schema. */
  get shape(): ParamsShape {
    if (this.paramsCheck) return { kind: 'schema', schema: this.paramsCheck.schema, jsonSchema: this.paramsJsonSchema };
    const dto = this.sources.find((s): s is Extract<ArgSource, { kind: 'dto' }> => s.kind === 'dto');
    if (dto) return { kind: 'dto', dtoClass: dto.binder.dtoClass, positional: dto.positional !== null };
    const named = this.sources.filter((s): s is Extract<ArgSource, { kind: 'param' }> => s.kind === 'param').sort((a, b) => a.position - b.position);
    if (named.length) {
      return {
        kind: 'named',
        params: named.map(({ name, type, optional, hasDefault, defaultValue, schema, jsonSchema }) => ({ name, type, optional, hasDefault, defaultValue, schema: schema?.schema, jsonSchema })),
      };
    }
    const raw = this.sources.findIndex((s) => s.kind === 'raw');
    // An undecorated handler that declares fewer parameters than the raw slot takes no params.
    if (raw === -1 || (this.input.args.length === 0 && raw >= this.input.paramTypes.length)) return { kind: 'none' };
    return { kind: 'raw' };
  }

  /** Indexes Nest's param pipeline fills (custom parameter decorators). */
  get externalArgs(): readonly number[] {
    return this.sources.flatMap((s, index) => (s.kind === 'external' ? [index] : []));
  }

  /** How many parameters the handler declares, or receives values for if that is more. */
  get parameterCount(): number {
    return Math.max(this.sources.length, this.input.paramTypes.length);
  }

  /** Indexes that receive the `RpcContext` (`@RpcCtx()`, or an undecorated handler's second parameter). */
  get contextArgs(): readonly number[] {
    return this.sources.flatMap((s, index) => (s.kind === 'ctx' ? [index] : []));
  }

  resolve(params: RpcParamsValue | undefined, ctx: RpcContext): unknown[] | Promise<unknown[]> {
    const whole = this.paramsCheck;
    if (whole === undefined) return this.bind(params, ctx);
    // Absent params are an empty by-name object, as for a DTO.
    const result = whole.check(params === undefined ? {} : params);
    if (isPendingResult(result)) return result.then((settled) => this.bindValidated(settled, ctx));
    return this.bindValidated(result, ctx);
  }

  private bindValidated(result: StandardSchemaV1.Result<unknown>, ctx: RpcContext): unknown[] | Promise<unknown[]> {
    if (result.issues) {
      const violations: ParamViolation[] = [];
      appendSchemaIssues(result.issues, '', violations);
      throw new RpcInvalidParamsException('Invalid params', { data: violations });
    }
    return this.bind(result.value as RpcParamsValue, ctx);
  }

  private bind(params: RpcParamsValue | undefined, ctx: RpcContext): unknown[] | Promise<unknown[]> {
    const sources = this.sources;
    const out: unknown[] = new Array(sources.length);
    let violations: ParamViolation[] | undefined;
    let pending: PendingParam[] | undefined;
    // A missing or mistyped @RpcParam names itself in the error message; others say "Invalid params".
    let headline: string | undefined;
    const isArray = Array.isArray(params);
    if (isArray && this.namedOnlyDto) {
      throw new RpcInvalidParamsException(`Method "${this.input.method}" requires named parameters`);
    }
    for (let i = 0; i < sources.length; i++) {
      const source = sources[i];
      switch (source.kind) {
        case 'ctx':
          out[i] = ctx;
          break;
        case 'raw':
          out[i] = params;
          break;
        case 'external':
          break;
        case 'dto': {
          const value = isArray ? this.positionalToNamed(params as unknown[], source.positional!) : (params ?? {});
          out[i] = source.binder.bind(value as Record<string, unknown>, '', (violations ??= []));
          break;
        }
        case 'param': {
          const value = params === undefined ? undefined : isArray ? (params as unknown[])[source.position] : (params as Record<string, unknown>)[source.name];
          if (value === undefined && source.optional) {
            out[i] = source.defaultValue;
          } else if (source.schema) {
            const result = source.schema.check(value);
            if (isPendingResult(result)) (pending ??= []).push({ index: i, name: source.name, result });
            else if (result.issues) appendSchemaIssues(result.issues, source.name, (violations ??= []));
            else out[i] = result.value;
          } else if (value === undefined) {
            const message = `Missing required parameter "${source.name}"`;
            headline ??= message;
            (violations ??= []).push({ path: source.name, message, code: 'isDefined' });
          } else if (source.accepts !== undefined && source.accepts(value)) {
            out[i] = value;
          } else {
            const found = (violations ??= []).length;
            out[i] = source.check(value, source.name, violations);
            if (violations.length > found && violations[found].path === source.name) headline ??= violations[found].message;
          }
          break;
        }
      }
    }
    if (params !== undefined) violations = this.checkExtra(params, isArray, violations);
    if (pending) return this.settle(out, pending, violations, headline);
    if (violations?.length) throw new RpcInvalidParamsException(headline ?? 'Invalid params', { data: violations });
    return out;
  }

  /** Waits for the `@RpcParam` schemas that answered with a Promise; their issues come after the others. */
  private async settle(out: unknown[], pending: readonly PendingParam[], violations: ParamViolation[] | undefined, headline: string | undefined): Promise<unknown[]> {
    const results = await Promise.all(pending.map((p) => p.result));
    for (let k = 0; k < pending.length; k++) {
      const result = results[k];
      if (result.issues) appendSchemaIssues(result.issues, pending[k].name, (violations ??= []));
      else out[pending[k].index] = result.value;
    }
    if (violations?.length) throw new RpcInvalidParamsException(headline ?? 'Invalid params', { data: violations });
    return out;
  }

  private checkExtra(params: RpcParamsValue, isArray: boolean, violations: ParamViolation[] | undefined) {
    if (isArray) {
      const items = params as unknown[];
      if (this.knownKeys && items.length > this.positionalCount) {
        (violations ??= []).push({ path: null, message: `Too many parameters: expected at most ${this.positionalCount}`, code: null });
      }
      return violations;
    }
    if (this.knownKeys) {
      for (const key of Object.keys(params)) {
        if (!this.knownKeys.has(key)) (violations ??= []).push({ path: key, message: 'Unknown parameter', code: null });
      }
    }
    return violations;
  }

  private positionalToNamed(items: unknown[], names: readonly string[]): Record<string, unknown> {
    const named: Record<string, unknown> = {};
    const n = Math.min(items.length, names.length);
    for (let i = 0; i < n; i++) named[names[i]] = items[i];
    // Extra items have no property to land on: surface them as unknown keys by position.
    for (let i = names.length; i < items.length; i++) named[String(i)] = items[i];
    return named;
  }

  /**
   * The one schema of the whole params: `@RpcMethod(name, { params })` or `@RpcParams({ schema })`
   * (both may name the same schema). Two different ones, or one on a DTO-typed argument, are
   * conflicts.
   */
  private wholeParamsSchema(args: readonly RpcArgMetadata[], paramTypes: readonly unknown[], contextClass: unknown): { schema?: StandardSchemaV1; jsonSchema?: RpcJsonSchema } {
    let schema = this.input.paramsSchema;
    let jsonSchema = this.input.paramsJsonSchema;
    for (const arg of args) {
      if (arg.kind !== 'params') continue;
      const given = arg.options?.schema;
      if (given === undefined) {
        if (arg.options?.jsonSchema !== undefined) this.problemList.push(`@RpcParams({ jsonSchema }) (argument ${arg.index}) describes a schema, and there is none: give @RpcParams({ schema })`);
        continue;
      }
      if (!isStandardSchema(given)) {
        this.problemList.push(`@RpcParams({ schema }) (argument ${arg.index}) must be a Standard Schema (zod, Valibot, ArkType, …); a JSON Schema that only describes params goes in @RpcMethod(name, { params })`);
        continue;
      }
      const type = paramTypes[arg.index];
      if (isDtoClass(type, contextClass) && declaresValidation(type)) {
        this.problemList.push(`argument ${arg.index} is typed with the DTO class ${type.name} and has @RpcParams({ schema }): give it one source, the DTO or the schema (type it with the schema's output)`);
      }
      if (schema !== undefined && schema !== given) {
        this.problemList.push(`argument ${arg.index} has @RpcParams({ schema }) and the method already has a different params schema: give one`);
        continue;
      }
      schema = given;
      jsonSchema ??= arg.options?.jsonSchema;
    }
    if (this.input.paramsJsonSchema !== undefined && schema === undefined) {
      this.problemList.push('option "jsonSchema.params" describes a Standard Schema of the params, and there is none: give the JSON Schema as "params" itself');
    }
    return { schema, jsonSchema };
  }

  private namedSource(arg: RpcArgMetadata, type: unknown, position: number, rejectUnknown: boolean): ArgSource {
    const options = arg.options ?? {};
    const name = arg.name!;
    let schema = options.schema;
    if (schema !== undefined && !isStandardSchema(schema)) {
      this.problemList.push(`@RpcParam("${name}", { schema }) must be a Standard Schema (zod, Valibot, ArkType, …); to describe the param with a JSON Schema give jsonSchema`);
      schema = undefined;
    }
    if (schema === undefined && options.jsonSchema !== undefined) {
      this.problemList.push(`@RpcParam("${name}", { jsonSchema }) describes a schema, and there is none: give @RpcParam("${name}", { schema })`);
    }
    // Beside a schema, only a class that declares constraints is a second source (see declaresValidation).
    const isDto = isDtoClass(type, this.input.contextClass) && declaresValidation(type);
    const base = { kind: 'param', name, position, defaultValue: options.default, hasDefault: 'default' in options, type, jsonSchema: options.jsonSchema } as const;
    if (this.paramsCheck) {
      if (schema !== undefined) this.problemList.push(`@RpcParam("${name}") has a schema and the method has a params schema: validate the param in one of them`);
      else if (isDto) this.problemList.push(`@RpcParam("${name}") is a DTO (${(type as ClassRef).name}) and the method has a params schema: params take one source, the DTO or the schema`);
      // It picks its value from what the params schema let through: nothing more to check.
      return { ...base, optional: true, check: passThrough, accepts: acceptsAny, schema: undefined };
    }
    const optional = options.optional === true || 'default' in options;
    if (schema === undefined) {
      const check = this.valueCheck(type, rejectUnknown);
      const accepts = check === passThrough ? acceptsAny : PRIMITIVE_CHECKS.get(type)?.test;
      return { ...base, optional, check, accepts, schema: undefined };
    }
    if (isDto) this.problemList.push(`@RpcParam("${name}") is typed with the DTO class ${(type as ClassRef).name} and has a schema: give it one source, the DTO or the schema`);
    return { ...base, optional, check: passThrough, accepts: undefined, schema: new StandardSchemaCheck(schema) };
  }

  private dtoSource(type: ClassConstructor<object>, rejectUnknown: boolean, allowPositional: boolean): ArgSource {
    const binder = new DtoBinder(type, rejectUnknown);
    return { kind: 'dto', binder, positional: allowPositional ? Object.freeze(binder.declaredProperties()) : null };
  }

  private valueCheck(type: unknown, rejectUnknown: boolean): ValueCheck {
    const primitive = PRIMITIVE_CHECKS.get(type);
    if (primitive) {
      return (value, path, out) => {
        if (!primitive.test(value)) out.push({ path, message: `Parameter "${path}" must be ${primitive.noun}`, code: primitive.code });
        return value;
      };
    }
    if (isDtoClass(type)) {
      const binder = new DtoBinder(type, rejectUnknown);
      return (value, path, out) => {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) {
          out.push({ path, message: `Parameter "${path}" must be an object`, code: 'isObject' });
          return value;
        }
        return binder.bind(value as Record<string, unknown>, path, out);
      };
    }
    return passThrough;
  }
}

const passThrough: ValueCheck = (value) => value;
const acceptsAny = (): boolean => true;
type ClassRef = abstract new (...args: any[]) => unknown;
