import { OptionProblems, type OptionCheck } from './option-checks.js';

/** One option of a section: how it is checked, its default, and its README row. */
export interface OptionLeaf<Out> {
  /** The "meaning" cell of the README's options table (markdown). */
  readonly doc: string;
  /** The value when the option is absent. */
  readonly default?: Out;
  /** The "default" cell when `default` reads badly as code (`8 MiB`, a derived value); else `default` as code, or `—`. */
  readonly shown?: string;
  /**
   * A route that moves with the top-level `path` unless given: absent, the option is `path`
   * followed by this (`'/stream'`: `/api/rpc/stream` when `path` is `/api/rpc`, `/stream` when it
   * is `/`). `default` is its value below the default `path`; the README cell says both.
   */
  readonly belowPath?: string;
  /** Runs on the value (given or default) when there is one, or always when `required`. */
  readonly check?: OptionCheck;
  /** The option must be given: `check` also runs on an absent value (and names the problem). */
  readonly required?: boolean;
  /**
   * For an option that is more than a checked value (a nested object, a header set, a list to
   * normalise): turns what was given into the resolved value, pushing its problems. Replaces
   * `default` and `check`.
   */
  readonly resolve?: (value: unknown, label: string, problems: OptionProblems) => Out;
}

/**
 * Every key of `In` (the public option interface), each with a leaf resolving to the same key of
 * `Out`: a key missing from the table or the interface fails to compile, so the two cannot drift.
 */
export type OptionTable<In, Out> = { readonly [K in keyof Required<In>]-?: OptionLeaf<K extends keyof Out ? Out[K] : never> };

/** A row of the README's options table. */
export interface OptionRow {
  readonly option: string;
  readonly shown: string;
  readonly doc: string;
}

/**
 * One section of the module options (`stream`, `durable`...), declared once: the key check, the
 * defaults, the value checks and the README rows all read its table. `name` is `''` for the
 * top-level options.
 */
export class OptionSection<In, Out> {
  readonly keys: readonly string[];

  constructor(
    readonly name: string,
    readonly table: OptionTable<In, Out>,
    /** Message of an unknown key (the MCP auth sections spell it with a capital). */
    private readonly unknownKey: (path: string) => string = (path) => `unknown option "${path}"`,
  ) {
    this.keys = Object.keys(table);
  }

  /** The label of one of its options in messages: `"durable.retryMs"`. */
  label(key: string): string {
    return `"${this.path(key)}"`;
  }

  /** Undefined, or an object of known keys (unknown ones are reported); false when it is no object at all. */
  checkKeys(given: unknown, problems: OptionProblems): boolean {
    const label = this.name === '' ? 'options' : `"${this.name}"`;
    return problems.object(label, given, this.keys, (key) => this.unknownKey(this.path(key)));
  }

  /**
   * Every option's value, defaults filled, each checked (its keys already checked: `readable` is
   * what `checkKeys` answered — a section that is not an object resolves to its defaults).
   * `path`: the app's top-level `path`, which the `belowPath` routes default below (undefined,
   * as when it is itself invalid: they take their `default`).
   */
  resolve(given: In | undefined, problems: OptionProblems, readable = true, path?: string): Out {
    const values = (readable && given ? given : {}) as Record<string, unknown>;
    // A section that is no object has had its one problem reported; its defaults are not checked again.
    if (!readable) problems = new OptionProblems();
    const resolved: Record<string, unknown> = {};
    for (const [key, leaf] of Object.entries<OptionLeaf<unknown>>(this.table)) {
      const label = this.label(key);
      let value: unknown;
      if (leaf.resolve) value = leaf.resolve(values[key], label, problems);
      else {
        value = values[key] ?? (leaf.belowPath !== undefined && path !== undefined ? routeBelow(path, leaf.belowPath) : leaf.default);
        if (value !== undefined || leaf.required) leaf.check?.(problems, label, value);
      }
      // Absent stays absent (a document built from it says nothing); a list is a copy: the
      // resolved options are frozen, the app's own values never.
      if (value !== undefined) resolved[key] = Array.isArray(value) ? [...value] : value;
    }
    return resolved as Out;
  }

  /** `checkKeys` and `resolve` at once, for a nested section read where it sits. */
  read(given: unknown, problems: OptionProblems): Out {
    return this.resolve(given as In | undefined, problems, this.checkKeys(given, problems));
  }

  /** Its rows of the README's options table. */
  rows(): OptionRow[] {
    return Object.entries<OptionLeaf<unknown>>(this.table).map(([key, leaf]) => ({
      option: this.path(key),
      shown: leaf.shown ?? shownDefault(leaf),
      doc: leaf.doc,
    }));
  }

  private path(key: string): string {
    return this.name === '' ? key : `${this.name}.${key}`;
  }
}

/** `below` (`/stream`) under the route `path`: `/api/rpc/stream`, or `/stream` under `/`. */
function routeBelow(path: string, below: string): string {
  return path === '/' ? below : `${path}${below}`;
}

/** The "default" cell of a leaf without `shown`. */
function shownDefault(leaf: OptionLeaf<unknown>): string {
  if (leaf.default === undefined) return leaf.required ? 'required' : '—';
  const value = `\`${showValue(leaf.default)}\``;
  return leaf.belowPath === undefined ? value : `${value} (\`path\` + \`${leaf.belowPath}\`)`;
}

function showValue(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
}
