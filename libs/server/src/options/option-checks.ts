/** The longest delay a Node timer honours (2^31 - 1 ms); a longer one fires after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * Collects every problem of a configuration, so one restart fixes them all: a typo in an option
 * name must fail startup, never silently fall back to a default. Used for the module options and
 * for the decorators' options (the registry's startup checks).
 */
export class OptionProblems {
  readonly list: string[] = [];

  push(problem: string): void {
    this.list.push(problem);
  }

  get size(): number {
    return this.list.length;
  }

  /** `value` is undefined or an object holding only `known` keys. `label` names it in messages. */
  object(label: string, value: unknown, known: readonly string[], unknownKey: (key: string) => string): boolean {
    if (value === undefined) return true;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.push(`${label} must be an object`);
      return false;
    }
    for (const key of Object.keys(value)) if (!known.includes(key)) this.push(unknownKey(key));
    return true;
  }

  integer(label: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) this.push(`${label} must be an integer >= ${min}, got ${String(value)}`);
    else if (value > max) this.push(`${label} must be at most ${max}, got ${value}`);
  }

  /** Milliseconds a timer will wait: Node clamps longer delays to 1 ms (a "practically never" value would flood). */
  timerDelay(label: string, value: unknown, min = 0): void {
    this.integer(label, value, min);
    if (typeof value === 'number' && value > MAX_TIMER_DELAY_MS) {
      this.push(`${label} must be at most ${MAX_TIMER_DELAY_MS} (about 24.8 days), got ${value}`);
    }
  }

  positiveNumber(label: string, value: unknown, unit = ''): void {
    if (!isPositiveNumber(value)) this.push(`${label} must be a number${unit} > 0`);
  }

  boolean(label: string, value: unknown): void {
    if (value !== undefined && typeof value !== 'boolean') this.push(`${label} must be a boolean`);
  }

  func(label: string, value: unknown): void {
    if (value !== undefined && typeof value !== 'function') this.push(`${label} must be a function`);
  }

  string(label: string, value: unknown): void {
    if (value !== undefined && typeof value !== 'string') this.push(`${label} must be a string`);
  }

  oneOf(label: string, value: unknown, allowed: readonly unknown[]): void {
    if (value !== undefined && !allowed.includes(value)) {
      this.push(`${label} must be ${allowed.map((a) => JSON.stringify(a)).join(', ').replace(/, ([^,]*)$/, ' or $1')}, got ${JSON.stringify(value)}`);
    }
  }

  /**
   * The one rule of every route option (`path`, `stream.path`, `durable.path`...): `/`, or
   * `/segments` without a trailing `/`, spaces, a fragment or route syntax (`:param`, `*`, `?`),
   * which Fastify and Express would read as patterns rather than the literal route.
   */
  routePath(label: string, value: unknown): void {
    if (typeof value !== 'string' || !value.startsWith('/') || (value.length > 1 && value.endsWith('/')) || /[:*?#\s]/.test(value)) {
      this.push(`${label} must be a string starting with "/", without a trailing "/", spaces or route wildcards, got ${JSON.stringify(value)}`);
    }
  }

  /** Undefined, or an array of non-empty strings (`nonEmptyList`: with at least one). */
  stringList(label: string, value: unknown, nonEmptyList = false): boolean {
    if (value === undefined) return true;
    if (isStringList(value) && (!nonEmptyList || value.length > 0)) return true;
    this.push(`${label} must be ${nonEmptyList ? 'a non-empty' : 'an'} array of non-empty strings`);
    return false;
  }
}

/** Checks one present value; pushes its problems, naming it `label` (`"durable.retryMs"`). */
export type OptionCheck = (problems: OptionProblems, label: string, value: unknown) => void;

/** The checks option tables name (see option-section.ts). */
export const check = {
  boolean: ((problems, label, value) => problems.boolean(label, value)) as OptionCheck,
  func: ((problems, label, value) => problems.func(label, value)) as OptionCheck,
  string: ((problems, label, value) => problems.string(label, value)) as OptionCheck,
  routePath: ((problems, label, value) => problems.routePath(label, value)) as OptionCheck,
  /** A route with routes built below it as `${path}/…` (durable, MCP): the route rule, and not `/` itself. */
  basePath: ((problems, label, value) => {
    problems.routePath(label, value);
    if (value === '/') problems.push(`${label} must not be "/": routes are built below it`);
  }) as OptionCheck,
  stringList: ((problems, label, value) => problems.stringList(label, value)) as OptionCheck,
  integer: (min: number, max?: number): OptionCheck => (problems, label, value) => problems.integer(label, value, min, max),
  timerDelay: (min = 0): OptionCheck => (problems, label, value) => problems.timerDelay(label, value, min),
  oneOf: (allowed: readonly unknown[]): OptionCheck => (problems, label, value) => problems.oneOf(label, value, allowed),
  nonEmptyString: ((problems, label, value) => {
    if (typeof value !== 'string' || value.length === 0) problems.push(`${label} must be a non-empty string`);
  }) as OptionCheck,
};

export function isPositiveNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

export function isStringList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((r) => typeof r === 'string' && r.length > 0);
}
