import type { ClassConstructor } from 'class-transformer';
import type { RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RpcArgsResolver, RpcContext } from '../context/rpc-context.js';
import type { RpcArgMetadata } from '../decorators/rpc-param.decorators.js';
import { RpcInvalidParamsException } from '../errors/rpc-exceptions.js';
import { DtoBinder } from './dto-binder.js';
import type { ParamViolation } from './param-violation.js';

/** What one handler argument receives. */
type ArgSource =
  | { kind: 'ctx' }
  | { kind: 'raw' }
  /** A custom parameter decorator (`createParamDecorator`): Nest's param pipeline fills it. */
  | { kind: 'external' }
  | { kind: 'dto'; binder: DtoBinder; positional: readonly string[] | null }
  | { kind: 'param'; name: string; position: number; optional: boolean; defaultValue: unknown; hasDefault: boolean; type: unknown; check: ValueCheck };

/**
 * How a method takes its params, for describing them (the schema builder): a DTO bound to the whole
 * params, named `@RpcParam`s in positional order, raw params, or none (the handler declares no
 * parameter to receive them; what a client sends anyway reaches no argument).
 */
export type ParamsShape =
  | { kind: 'dto'; dtoClass: ClassConstructor<object>; positional: boolean }
  | { kind: 'named'; params: ReadonlyArray<{ name: string; type: unknown; optional: boolean; hasDefault: boolean; defaultValue: unknown }> }
  | { kind: 'raw' }
  | { kind: 'none' };

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
 */
export class ParamPlan implements RpcArgsResolver {
  private readonly sources: readonly ArgSource[];
  /** JSON keys claimed by `@RpcParam`s, when unknown keys must be rejected. */
  private readonly knownKeys: ReadonlySet<string> | null;
  private readonly positionalCount: number;
  private readonly namedOnlyDto: boolean;

  constructor(private readonly input: ParamPlanInput) {
    const { args, paramTypes, contextClass, rejectUnknown, allowPositional } = input;
    const external = new Set(input.externalArgs ?? []);
    const sources: ArgSource[] = [];
    for (const index of external) sources[index] = { kind: 'external' };
    const paramsSource = (type: unknown): ArgSource =>
      isDtoClass(type, contextClass) ? this.dtoSource(type, rejectUnknown, allowPositional) : { kind: 'raw' };
    if (args.length === 0) {
      // Undecorated: the first parameter without a decorator takes params (bound when its type is a
      // DTO class), the next one the context.
      let index = 0;
      for (const next of ['params', 'ctx'] as const) {
        while (external.has(index)) index++;
        sources[index] = next === 'ctx' ? { kind: 'ctx' } : paramsSource(paramTypes[index]);
        index++;
      }
    } else {
      let position = 0;
      const sorted = [...args].sort((a, b) => a.index - b.index);
      for (const arg of sorted) {
        const type = paramTypes[arg.index];
        if (arg.kind === 'ctx') sources[arg.index] = { kind: 'ctx' };
        else if (arg.kind === 'params') sources[arg.index] = paramsSource(type);
        else {
          const options = arg.options ?? {};
          sources[arg.index] = {
            kind: 'param',
            name: arg.name!,
            position: position++,
            optional: options.optional === true || 'default' in options,
            defaultValue: options.default,
            hasDefault: 'default' in options,
            type,
            check: this.valueCheck(type, rejectUnknown),
          };
        }
      }
    }
    for (let i = 0; i < sources.length; i++) sources[i] ??= { kind: 'raw' };
    this.sources = Object.freeze(sources);
    const params = sources.filter((s): s is Extract<ArgSource, { kind: 'param' }> => s.kind === 'param');
    const claimsWhole = sources.some((s) => s.kind === 'dto' || s.kind === 'raw');
    this.knownKeys = rejectUnknown && !claimsWhole ? new Set(params.map((p) => p.name)) : null;
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

  /** How the method takes its params, for its schema. */
  get shape(): ParamsShape {
    const dto = this.sources.find((s): s is Extract<ArgSource, { kind: 'dto' }> => s.kind === 'dto');
    if (dto) return { kind: 'dto', dtoClass: dto.binder.dtoClass, positional: dto.positional !== null };
    const named = this.sources.filter((s): s is Extract<ArgSource, { kind: 'param' }> => s.kind === 'param').sort((a, b) => a.position - b.position);
    if (named.length) return { kind: 'named', params: named.map(({ name, type, optional, hasDefault, defaultValue }) => ({ name, type, optional, hasDefault, defaultValue })) };
    const raw = this.sources.findIndex((s) => s.kind === 'raw');
    // An undecorated handler that declares fewer parameters than the raw slot takes no params.
    if (raw === -1 || (this.input.args.length === 0 && raw >= this.input.paramTypes.length)) return { kind: 'none' };
    return { kind: 'raw' };
  }

  /** Indexes Nest's param pipeline fills (custom parameter decorators). */
  get externalArgs(): readonly number[] {
    return this.sources.flatMap((s, index) => (s.kind === 'external' ? [index] : []));
  }

  resolve(params: RpcParamsValue | undefined, ctx: RpcContext): unknown[] {
    const sources = this.sources;
    const out: unknown[] = new Array(sources.length);
    let violations: ParamViolation[] | undefined;
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
          if (value === undefined) {
            if (source.optional) out[i] = source.defaultValue;
            else {
              const message = `Missing required parameter "${source.name}"`;
              headline ??= message;
              (violations ??= []).push({ path: source.name, message, code: 'isDefined' });
            }
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
    return (value) => value;
  }
}
