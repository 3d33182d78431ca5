import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import type { ParamViolation } from './param-violation.js';

const WHITELIST_CONSTRAINT = 'whitelistValidation';

/**
 * Turns plain params into an instance of a DTO class and validates it with class-validator.
 * One binder per (class, rejectUnknown) pair, built at startup.
 *
 * Validation is synchronous (`validateSync`): it runs inside Nest's param pipeline, which reads
 * argument values synchronously. Async class-validator constraints are therefore not supported.
 */
export class DtoBinder<T extends object = object> {
  private readonly validatorOptions;

  constructor(
    readonly dtoClass: ClassConstructor<T>,
    readonly rejectUnknown: boolean,
  ) {
    this.validatorOptions = Object.freeze({
      whitelist: rejectUnknown,
      forbidNonWhitelisted: rejectUnknown,
      forbidUnknownValues: false,
      validationError: { target: false, value: false },
    });
  }

  /** Properties in declaration order, as class-validator recorded them (for positional params). */
  declaredProperties(): string[] {
    const metas = getMetadataStorage().getTargetValidationMetadatas(this.dtoClass, '', true, false);
    return [...new Set(metas.map((m) => m.propertyName))];
  }

  /** Binds `value`; violations are appended to `out` with `prefix` before their paths. */
  bind(value: Record<string, unknown>, prefix: string, out: ParamViolation[]): T {
    const forbidden = constructorKeyPath(value);
    if (forbidden !== undefined) {
      out.push({ path: prefix ? `${prefix}.${forbidden}` : forbidden, message: 'Parameter name not allowed', code: 'forbiddenKey' });
      return value as T;
    }
    let instance: T;
    let errors: ValidationError[];
    try {
      instance = plainToInstance(this.dtoClass, value);
      errors = validateSync(instance, this.validatorOptions);
    } catch (error) {
      // class-transformer and class-validator recurse once per level: hostile nesting (thousands of
      // levels, within the body limit) overflows the stack. That is the caller's input, not a fault.
      if (!(error instanceof RangeError)) throw error;
      out.push({ path: prefix || null, message: 'Params are nested too deeply', code: 'maxDepth' });
      return value as T;
    }
    if (errors.length) flattenValidationErrors(errors, prefix, out);
    return instance;
  }
}

/**
 * Whether `type` declares class-validator constraints: a DTO that would validate something. A
 * function type without any (zod's `z.output`, a runtime function, is what a compiler that cannot
 * see types — swc — records for `p: z.output<typeof S>`) says nothing beside a schema.
 */
export function declaresValidation(type: ClassConstructor<object>): boolean {
  return getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).length > 0;
}

/**
 * The dotted path of the first own `constructor` key in `value`, if any. class-transformer takes a
 * nested object's `constructor` for its class, so `{"x":{"constructor":1}}` made it throw a
 * TypeError (an internal error for the caller's input; found by the fuzzer, test/fuzz/). No DTO
 * can declare a property of that name, so the key is refused wherever it is. Iterative: params
 * may be nested thousands deep.
 */
function constructorKeyPath(value: unknown): string | undefined {
  const values: unknown[] = [value];
  const parents: number[] = [-1];
  const keys: string[] = [''];
  for (let next = 0; next < values.length; next++) {
    const v = values[next];
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, 'constructor')) {
      const path = ['constructor'];
      for (let at = next; at > 0; at = parents[at]) path.unshift(keys[at]);
      return path.join('.');
    }
    for (const key of Object.keys(v)) {
      values.push((v as Record<string, unknown>)[key]);
      parents.push(next);
      keys.push(key);
    }
  }
  return undefined;
}

export function flattenValidationErrors(errors: ValidationError[], prefix: string, out: ParamViolation[]): void {
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    if (error.constraints) {
      for (const [code, message] of Object.entries(error.constraints)) {
        out.push(code === WHITELIST_CONSTRAINT ? { path, message: 'Unknown parameter', code: null } : { path, message, code });
      }
    }
    if (error.children?.length) flattenValidationErrors(error.children, path, out);
  }
}
