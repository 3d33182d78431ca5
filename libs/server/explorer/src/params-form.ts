import { button, clear, h, pretty } from './dom.js';
import type { FieldError } from './params-validator.js';
import { resolveSchema, type ExplorerDocument, type ExplorerMethod, type JsonSchema } from './openrpc-view.js';

type Schema = Record<string, unknown>;

/** Nested DTOs deeper than this are edited as JSON (a self-referencing tree would never end). */
const MAX_DEPTH = 6;

/**
 * One editable value of the params, at `path` (`address.city`, `tags.0`; '' is the params
 * themselves). `read` returns undefined for a value left out; with `keepEmpty` an array keeps
 * its empty rows (to rebuild them after a removal).
 */
interface FormNode {
  readonly path: string;
  readonly element: HTMLElement;
  read(errors: FieldError[], keepEmpty?: boolean): unknown;
  set(value: unknown): void;
  /** The deepest node shown for `path` (a group edited as JSON answers for everything inside it). */
  find(path: string): FormNode | undefined;
  showError(message: string): void;
  clearErrors(): void;
}

interface Build {
  readonly doc: ExplorerDocument;
  readonly onEdit: () => void;
  /** `$ref`s being expanded above this point: meeting one again means a cycle. */
  readonly refs: readonly string[];
  readonly depth: number;
}

const idOf = (path: string) => `param-${path}`;
const child = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
const errorBox = () => h('span', { class: 'field-error', attrs: { role: 'alert' } });

/**
 * A form built from a method's params: an input per scalar (selects for enums and booleans,
 * number inputs with bounds, masked inputs for `format: password` / `writeOnly`), a fieldset of
 * sub-fields per nested object, rows with add/remove per array, a JSON textarea for whatever a
 * form cannot express — and every group, like the params as a whole, one click away from a JSON
 * editor. Empty inputs are left out of the params.
 */
export class ParamsForm {
  readonly element: HTMLElement;
  private readonly root: GroupNode;

  /** `onSubmit`: Enter in an input runs the method's main action (Call, Start). */
  constructor(method: ExplorerMethod, doc: ExplorerDocument, onEdit: () => void, onSubmit: () => void) {
    const schema: Schema = {
      type: 'object',
      properties: Object.fromEntries(method.params.map((p) => [p.name, p.schema])),
      required: method.params.filter((p) => p.required).map((p) => p.name),
    };
    // With nothing described, the JSON editor is the whole form.
    this.root = new GroupNode('', 'Params', false, schema, { doc, onEdit, refs: [], depth: 0 }, method.params.length === 0);
    // A form, so Enter submits and password managers see the login fields; never sent by the browser itself.
    this.element = h(
      'form',
      { class: 'params', attrs: { novalidate: '' }, on: { submit: (event) => { event.preventDefault(); onSubmit(); } } },
      this.root.element,
      h('button', { class: 'offscreen', attrs: { type: 'submit', tabindex: '-1', 'aria-hidden': 'true' } }, 'Run'),
    );
  }

  /** The params to send (undefined: none), or the errors of inputs that hold no valid value. */
  read(): { params: unknown; errors: FieldError[] } {
    const errors: FieldError[] = [];
    const params = this.root.read(errors);
    return { params: this.root.jsonMode ? params : (params ?? {}), errors };
  }

  /** What is typed, kept when the page re-renders (a reload of the description, back and forth between methods). */
  draft(): ParamsDraft {
    return this.root.jsonMode ? { json: this.root.jsonText() } : { value: this.root.read([], true) };
  }

  restore(draft: ParamsDraft): void {
    if (draft.json !== undefined) this.root.setJsonText(draft.json);
    else if (draft.value !== undefined) this.root.set(draft.value);
  }

  /** Shows each error at its input, the nearest enclosing group, or below the form. */
  showErrors(errors: readonly FieldError[]): void {
    this.clearErrors();
    for (const error of errors) {
      const node = error.path === '' ? undefined : this.root.find(error.path);
      if (node && node !== this.root) {
        const rest = error.path === node.path ? '' : error.path.slice(node.path.length + (node.path === '' ? 0 : 1));
        node.showError(rest ? `${rest}: ${error.message}` : error.message);
      } else {
        this.root.showError(error.path ? `${error.path}: ${error.message}` : error.message);
      }
    }
  }

  clearErrors(): void {
    this.root.clearErrors();
  }
}

export interface ParamsDraft {
  json?: string;
  value?: unknown;
}

/** `X or null` (an optional DTO property) is edited as X; `$ref`s are resolved (a cycle is not followed). */
function editable(given: JsonSchema, build: Build): { schema: Schema; refs: readonly string[]; cycle: boolean } {
  let schema = given;
  let refs = build.refs;
  for (let hops = 0; hops < 8; hops++) {
    if (typeof schema !== 'object') return { schema: {}, refs, cycle: false };
    const ref = typeof schema.$ref === 'string' ? schema.$ref : undefined;
    if (ref) {
      if (refs.includes(ref)) return { schema: {}, refs, cycle: true };
      refs = [...refs, ref];
      schema = resolveSchema(schema, build.doc);
      continue;
    }
    if (Array.isArray(schema.anyOf)) {
      const rest = (schema.anyOf as JsonSchema[]).filter((s) => !(typeof s === 'object' && s.type === 'null'));
      if (rest.length === 1) {
        schema = { ...rest[0] as Schema, ...(schema.description ? { description: schema.description } : {}) };
        continue;
      }
    }
    return { schema, refs, cycle: false };
  }
  return { schema: {}, refs, cycle: true };
}

function typeOf(schema: Schema): string | undefined {
  return Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : (schema.type as string | undefined);
}

/** The node that edits `schema` at `path`. */
function nodeFor(path: string, name: string, required: boolean, given: JsonSchema, build: Build): FormNode {
  const { schema, refs, cycle } = editable(given, build);
  const inner: Build = { ...build, refs, depth: build.depth + 1 };
  const type = typeOf(schema);
  if (!cycle && build.depth < MAX_DEPTH) {
    if (type === 'object' && schema.properties && typeof schema.properties === 'object' && Object.keys(schema.properties).length) {
      return new GroupNode(path, name, required, schema, inner, false);
    }
    if (type === 'array' && schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
      return new GroupNode(path, name, required, schema, inner, false);
    }
  }
  return new InputNode(path, name, required, schema, build);
}

/** A one-line summary of a schema under its input (`string, email`, `integer 13–130`). */
function describeSchema(schema: Schema): string {
  const parts: string[] = [];
  if (schema.type) parts.push(Array.isArray(schema.type) ? (schema.type as string[]).join(' | ') : String(schema.type));
  if (schema.format) parts.push(String(schema.format));
  if (schema.minimum !== undefined || schema.maximum !== undefined) parts.push(`${schema.minimum ?? '…'}–${schema.maximum ?? '…'}`);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) parts.push(`length ${schema.minLength ?? 0}–${schema.maxLength ?? '…'}`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined) parts.push(`${schema.minItems ?? 0}–${schema.maxItems ?? '…'} items`);
  if (schema.pattern) parts.push(`/${String(schema.pattern)}/`);
  return parts.join(', ');
}

function labelOf(path: string, name: string, required: boolean): HTMLLabelElement {
  return h('label', { attrs: { for: idOf(path) } }, name, required ? h('abbr', { class: 'required', attrs: { title: 'required' } }, ' *') : null);
}

type InputKind = 'enum' | 'boolean' | 'integer' | 'number' | 'string' | 'json';

/** One input: a scalar, or JSON in a textarea for what the form does not break down. */
class InputNode implements FormNode {
  readonly element: HTMLElement;
  private readonly kind: InputKind;
  private readonly input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  private readonly error = errorBox();
  private readonly values: unknown[] = [];

  constructor(readonly path: string, name: string, required: boolean, schema: Schema, build: Build) {
    const id = idOf(path);
    const onInput = () => build.onEdit();
    const type = typeOf(schema);
    let reveal: HTMLButtonElement | undefined;
    if (Array.isArray(schema.enum)) {
      this.kind = 'enum';
      this.values = schema.enum as unknown[];
      this.input = h('select', { id, on: { change: onInput } }, h('option', { attrs: { value: '' } }, required ? '— choose —' : '— leave out —'));
      this.values.forEach((value, i) => this.input.append(h('option', { attrs: { value: String(i) } }, JSON.stringify(value))));
    } else if (type === 'boolean') {
      this.kind = 'boolean';
      this.input = h('select', { id, on: { change: onInput } }, h('option', { attrs: { value: '' } }, '—'), h('option', {}, 'true'), h('option', {}, 'false'));
    } else if (type === 'integer' || type === 'number') {
      this.kind = type;
      const input = h('input', { id, attrs: { type: 'number', step: type === 'integer' ? '1' : 'any', inputmode: type === 'integer' ? 'numeric' : 'decimal' }, on: { input: onInput } });
      if (typeof schema.minimum === 'number') input.min = String(schema.minimum);
      if (typeof schema.maximum === 'number') input.max = String(schema.maximum);
      this.input = input;
    } else if (type === 'string') {
      this.kind = 'string';
      const secret = schema.format === 'password' || schema.writeOnly === true;
      const input = h('input', { id, attrs: { type: secret ? 'password' : 'text', autocomplete: secret ? 'current-password' : 'off', spellcheck: 'false', placeholder: typeof schema.format === 'string' ? schema.format : '' }, on: { input: onInput } });
      this.input = input;
      if (secret) {
        reveal = button('Show', () => {
          const shown = input.type === 'text';
          input.type = shown ? 'password' : 'text';
          reveal!.textContent = shown ? 'Show' : 'Hide';
          reveal!.setAttribute('aria-pressed', String(!shown));
        }, { class: 'small reveal', attrs: { 'aria-controls': id, 'aria-pressed': 'false', 'aria-label': `Show ${name}` } });
      }
    } else {
      this.kind = 'json';
      this.input = h('textarea', { id, class: 'json-input', attrs: { rows: '3', spellcheck: 'false', placeholder: type === 'array' ? '[ … ] (JSON)' : '{ … } (JSON)' }, on: { input: onInput } });
    }
    const hint = [describeSchema(schema), typeof schema.description === 'string' ? schema.description : ''].filter(Boolean).join(' · ');
    this.element = h(
      'div',
      { class: 'field', attrs: { 'data-field': path } },
      labelOf(path, name, required),
      h('div', { class: 'control' }, this.input, reveal),
      hint ? h('span', { class: 'hint' }, hint) : null,
      this.error,
    );
  }

  read(errors: FieldError[]): unknown {
    const raw = this.input.value;
    if (raw === '') return undefined;
    switch (this.kind) {
      case 'enum':
        return this.values[Number(raw)];
      case 'boolean':
        return raw === 'true';
      case 'integer':
      case 'number': {
        const n = Number(raw);
        if (raw.trim() === '' || !Number.isFinite(n)) return void errors.push(this.problem('must be a number'));
        return n;
      }
      case 'string':
        return raw;
      default:
        try {
          return JSON.parse(raw);
        } catch {
          return void errors.push(this.problem('must be JSON'));
        }
    }
  }

  private problem(message: string): FieldError {
    return { field: this.path.split('.')[0], path: this.path, message };
  }

  set(value: unknown): void {
    if (value === undefined || value === null) this.input.value = '';
    else if (this.kind === 'enum') this.input.value = String(this.values.findIndex((v) => JSON.stringify(v) === JSON.stringify(value)));
    else if (this.kind === 'json') this.input.value = pretty(value);
    else this.input.value = String(value);
  }

  find(path: string): FormNode | undefined {
    return path === this.path || path.startsWith(`${this.path}.`) ? this : undefined;
  }

  showError(message: string): void {
    this.error.append(h('span', {}, message));
    this.input.setAttribute('aria-invalid', 'true');
  }

  clearErrors(): void {
    clear(this.error);
    this.input.removeAttribute('aria-invalid');
  }
}

/**
 * An object (a fieldset of its properties) or an array (rows with add/remove), with a toggle to
 * edit it as JSON instead. The root group is the params themselves (`#params-mode`, `#params-json`).
 */
class GroupNode implements FormNode {
  readonly element: HTMLElement;
  jsonMode = false;
  private readonly isArray: boolean;
  private children: FormNode[] = [];
  private readonly body = h('div', { class: 'group-body' });
  private readonly json: HTMLTextAreaElement;
  private readonly errors: HTMLElement;
  private readonly toggle: HTMLButtonElement;
  private readonly rows = h('div', { class: 'rows' });

  constructor(readonly path: string, name: string, required: boolean, private readonly schema: Schema, private readonly build: Build, jsonOnly: boolean) {
    const root = path === '';
    this.isArray = typeOf(schema) === 'array';
    this.json = h('textarea', {
      id: root ? 'params-json' : `${idOf(path)}-json`,
      class: 'json-input',
      attrs: { rows: root ? '8' : '4', spellcheck: 'false', 'aria-label': `${root ? 'Params' : path} as JSON` },
      on: { input: () => build.onEdit() },
    });
    this.json.hidden = true;
    this.errors = root ? h('ul', { class: 'errors', id: 'params-errors' }) : errorBox();
    this.toggle = button('Edit as JSON', () => this.setJsonMode(!this.jsonMode), { id: root ? 'params-mode' : `${idOf(path)}-mode`, class: 'small' });
    if (this.isArray) {
      this.body.append(this.rows, button('Add item', () => this.addRow(undefined), { id: `${idOf(path)}-add`, class: 'small add' }));
    } else {
      const properties = schema.properties as Record<string, JsonSchema>;
      const requiredKeys = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      this.children = Object.entries(properties).map(([key, s]) => nodeFor(child(path, key), key, requiredKeys.includes(key), s, build));
      this.body.append(...this.children.map((c) => c.element));
    }
    if (root) {
      this.element = h(
        'div',
        { class: 'params-root' },
        h('h3', {}, 'Params ', jsonOnly ? h('span', { class: 'muted' }, '(not described: any JSON value)') : this.toggle),
        this.body,
        this.json,
        this.errors,
      );
    } else {
      const hint = describeSchema(schema);
      this.element = h(
        'fieldset',
        { class: this.isArray ? 'group array' : 'group', id: idOf(path), attrs: { 'data-field': path } },
        h('legend', {}, h('span', { class: 'name' }, name), required ? h('abbr', { class: 'required', attrs: { title: 'required' } }, ' *') : null, hint ? h('span', { class: 'hint' }, ` ${hint}`) : null, ' ', this.toggle),
        this.body,
        this.json,
        this.errors,
      );
    }
    if (jsonOnly) this.setJsonMode(true);
  }

  private addRow(value: unknown): void {
    const index = this.children.length;
    const itemPath = child(this.path, index);
    const node = nodeFor(itemPath, `${index}`, false, this.schema.items as JsonSchema, this.build);
    if (value !== undefined) node.set(value);
    this.children.push(node);
    this.rows.append(
      h('div', { class: 'array-row', attrs: { 'data-row': itemPath } }, node.element, button('×', () => this.removeRow(index), { class: 'small remove', attrs: { 'aria-label': `Remove item ${index}`, 'data-remove': itemPath } })),
    );
    this.build.onEdit();
  }

  private removeRow(index: number): void {
    const values = this.read([], true) as unknown[] | undefined;
    this.set((values ?? []).filter((_, i) => i !== index), true);
  }

  read(errors: FieldError[], keepEmpty = false): unknown {
    if (this.jsonMode) {
      const text = this.json.value.trim();
      if (text === '') return undefined;
      try {
        return JSON.parse(text);
      } catch (error) {
        const message = this.path === '' ? `Params are not JSON: ${(error as Error).message}` : `must be JSON: ${(error as Error).message}`;
        return void errors.push({ field: this.path.split('.')[0], path: this.path, message });
      }
    }
    if (this.isArray) {
      const items = this.children.map((c) => c.read(errors, keepEmpty));
      const kept = keepEmpty ? items : items.filter((v) => v !== undefined);
      return kept.some((v) => v !== undefined) || (keepEmpty && kept.length) ? kept : undefined;
    }
    const value: Record<string, unknown> = {};
    const keys = Object.keys(this.schema.properties as object);
    this.children.forEach((c, i) => {
      const v = c.read(errors, keepEmpty);
      if (v !== undefined) value[keys[i]] = v;
    });
    return Object.keys(value).length ? value : undefined;
  }

  set(value: unknown, keepEmpty = false): void {
    if (this.jsonMode) {
      this.json.value = value === undefined ? '' : pretty(value);
      return;
    }
    if (this.isArray) {
      this.children = [];
      clear(this.rows);
      if (Array.isArray(value)) for (const item of value) if (item !== undefined || keepEmpty) this.addRow(item);
      return;
    }
    const record = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    const keys = Object.keys(this.schema.properties as object);
    this.children.forEach((c, i) => c.set(record[keys[i]]));
  }

  jsonText(): string {
    return this.json.value;
  }

  setJsonText(text: string): void {
    this.setJsonMode(true);
    this.json.value = text;
  }

  private setJsonMode(on: boolean): void {
    this.clearErrors();
    if (on && !this.jsonMode) {
      const value = this.read([]);
      this.json.value = value === undefined ? '' : pretty(value);
    } else if (!on && this.jsonMode) {
      const text = this.json.value.trim();
      let value: unknown;
      try {
        value = text === '' ? undefined : JSON.parse(text);
      } catch (error) {
        this.showError(`Not JSON, so it stays in the JSON editor: ${(error as Error).message}`);
        return;
      }
      this.jsonMode = false;
      this.set(value);
    }
    this.jsonMode = on;
    this.json.hidden = !on;
    this.body.hidden = on;
    this.toggle.textContent = on ? 'Edit as form' : 'Edit as JSON';
    this.toggle.setAttribute('aria-pressed', String(on));
  }

  find(path: string): FormNode | undefined {
    if (path !== this.path && !(this.path === '' || path.startsWith(`${this.path}.`))) return undefined;
    if (this.jsonMode || path === this.path) return this;
    for (const c of this.children) {
      const found = c.find(path);
      if (found) return found;
    }
    return this;
  }

  showError(message: string): void {
    this.errors.append(h(this.path === '' ? 'li' : 'span', {}, message));
    if (this.jsonMode) this.json.setAttribute('aria-invalid', 'true');
  }

  clearErrors(): void {
    clear(this.errors);
    this.json.removeAttribute('aria-invalid');
    for (const c of this.children) c.clearErrors();
  }
}
