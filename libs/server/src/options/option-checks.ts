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
  timerDelay(label: string, value: unknown): void {
    this.integer(label, value, 0);
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

  /** A route: a string starting with `/`. */
  path(label: string, value: unknown): void {
    if (typeof value !== 'string' || !value.startsWith('/')) this.push(`${label} must be a string starting with "/"`);
  }

  /** Undefined, or an array of non-empty strings (`nonEmptyList`: with at least one). */
  stringList(label: string, value: unknown, nonEmptyList = false): boolean {
    if (value === undefined) return true;
    if (isStringList(value) && (!nonEmptyList || value.length > 0)) return true;
    this.push(`${label} must be ${nonEmptyList ? 'a non-empty' : 'an'} array of non-empty strings`);
    return false;
  }
}

export function isPositiveNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

export function isStringList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((r) => typeof r === 'string' && r.length > 0);
}
