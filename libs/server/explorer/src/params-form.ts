import { clear, h, pretty } from './dom.js';
import type { FieldError } from './params-validator.js';
import { resolveSchema, type ExplorerDocument, type ExplorerMethod, type JsonSchema } from './openrpc-view.js';

type Kind = 'enum' | 'boolean' | 'integer' | 'number' | 'string' | 'json';

interface Field {
  name: string;
  kind: Kind;
  required: boolean;
  input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  error: HTMLElement;
  enumValues?: unknown[];
}

/**
 * A form built from a method's params (one input per param, chosen from its schema: a select for
 * enums and booleans, a number or text input, a JSON textarea for objects and arrays), and a JSON
 * editor for the whole params value. Empty inputs are left out of the params.
 */
export class ParamsForm {
  readonly element: HTMLElement;
  private readonly fields: Field[] = [];
  private readonly general = h('ul', { class: 'errors', id: 'params-errors' });
  private readonly jsonEditor = h('textarea', { id: 'params-json', attrs: { rows: '8', spellcheck: 'false', 'aria-label': 'Params as JSON' } });
  private readonly formBox = h('div', { class: 'fields' });
  private jsonMode = false;

  constructor(private readonly method: ExplorerMethod, private readonly doc: ExplorerDocument, private readonly onEdit: () => void) {
    for (const param of method.params) this.fields.push(this.field(param.name, param.schema, param.required === true));
    const toggle = h('button', { id: 'params-mode', attrs: { type: 'button' }, on: { click: () => this.setJsonMode(!this.jsonMode) } }, 'Edit as JSON');
    this.jsonEditor.addEventListener('input', () => this.onEdit());
    this.jsonEditor.hidden = true;
    this.element = h(
      'section',
      { class: 'params' },
      h('h3', {}, 'Params ', method.params.length ? toggle : h('span', { class: 'muted' }, '(none described: the JSON editor sends any value)')),
      this.formBox,
      this.jsonEditor,
      this.general,
    );
    for (const field of this.fields) {
      this.formBox.append(
        h(
          'div',
          { class: 'field', attrs: { 'data-field': field.name } },
          h('label', { attrs: { for: `param-${field.name}` } }, field.name, field.required ? h('span', { class: 'required', attrs: { title: 'required' } }, ' *') : null),
          field.input,
          h('span', { class: 'hint' }, describeSchema(resolveSchema(method.params.find((p) => p.name === field.name)!.schema, doc))),
          field.error,
        ),
      );
    }
    if (!method.params.length) this.setJsonMode(true);
  }

  /** The params to send, or errors (a field that is not valid JSON). */
  read(): { params: Record<string, unknown> | unknown[] | undefined; errors: FieldError[] } {
    if (this.jsonMode) {
      const text = this.jsonEditor.value.trim();
      if (text === '') return { params: undefined, errors: [] };
      try {
        return { params: JSON.parse(text), errors: [] };
      } catch (error) {
        return { params: undefined, errors: [{ field: '', path: '', message: `Params are not JSON: ${(error as Error).message}` }] };
      }
    }
    const params: Record<string, unknown> = {};
    const errors: FieldError[] = [];
    for (const field of this.fields) {
      const raw = field.input.value;
      if (raw === '') continue;
      switch (field.kind) {
        case 'enum':
          params[field.name] = field.enumValues![Number(raw)];
          break;
        case 'boolean':
          params[field.name] = raw === 'true';
          break;
        case 'integer':
        case 'number': {
          const n = Number(raw);
          if (raw.trim() === '' || !Number.isFinite(n)) errors.push({ field: field.name, path: field.name, message: 'must be a number' });
          else params[field.name] = n;
          break;
        }
        case 'string':
          params[field.name] = raw;
          break;
        default:
          try {
            params[field.name] = JSON.parse(raw);
          } catch {
            errors.push({ field: field.name, path: field.name, message: 'must be JSON' });
          }
      }
    }
    return { params, errors };
  }

  /** Shows errors next to their field; the rest (params as a whole, unknown fields) below. */
  showErrors(errors: readonly FieldError[]): void {
    this.clearErrors();
    for (const error of errors) {
      const field = this.jsonMode ? undefined : this.fields.find((f) => f.name === error.field);
      const text = error.path && error.path !== error.field ? `${error.path.slice(error.field.length + 1)}: ${error.message}` : error.message;
      if (field) {
        field.error.append(h('span', {}, text));
        field.input.setAttribute('aria-invalid', 'true');
      } else {
        this.general.append(h('li', {}, error.path ? `${error.path}: ${error.message}` : error.message));
      }
    }
  }

  clearErrors(): void {
    clear(this.general);
    for (const field of this.fields) {
      clear(field.error);
      field.input.removeAttribute('aria-invalid');
    }
  }

  private setJsonMode(on: boolean): void {
    if (on && !this.jsonMode) {
      const { params } = this.read();
      this.jsonEditor.value = params === undefined || (typeof params === 'object' && !Object.keys(params).length && this.fields.length === 0) ? this.jsonEditor.value : pretty(params);
    }
    this.jsonMode = on;
    this.jsonEditor.hidden = !on;
    this.formBox.hidden = on;
    const toggle = this.element.querySelector('#params-mode');
    if (toggle) toggle.textContent = on ? 'Edit as form' : 'Edit as JSON';
    this.clearErrors();
  }

  private field(name: string, given: JsonSchema, required: boolean): Field {
    const schema = nonNull(resolveSchema(given, this.doc), this.doc);
    const id = `param-${name}`;
    const error = h('span', { class: 'field-error', attrs: { role: 'alert' } });
    const onInput = () => this.onEdit();
    if (Array.isArray(schema.enum)) {
      const values = schema.enum as unknown[];
      const select = h('select', { id, on: { change: onInput } }, h('option', { attrs: { value: '' } }, required ? '— choose —' : '— leave out —'));
      values.forEach((value, i) => select.append(h('option', { attrs: { value: String(i) } }, JSON.stringify(value))));
      return { name, kind: 'enum', required, input: select, error, enumValues: values };
    }
    const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : (schema.type as string | undefined);
    if (type === 'boolean') {
      const select = h('select', { id, on: { change: onInput } }, h('option', { attrs: { value: '' } }, '—'), h('option', {}, 'true'), h('option', {}, 'false'));
      return { name, kind: 'boolean', required, input: select, error };
    }
    if (type === 'integer' || type === 'number') {
      const input = h('input', { id, attrs: { type: 'number', step: type === 'integer' ? '1' : 'any' }, on: { input: onInput } });
      if (typeof schema.minimum === 'number') input.min = String(schema.minimum);
      if (typeof schema.maximum === 'number') input.max = String(schema.maximum);
      return { name, kind: type, required, input, error };
    }
    if (type === 'string') {
      const input = h('input', { id, attrs: { type: 'text', placeholder: typeof schema.format === 'string' ? schema.format : '' }, on: { input: onInput } });
      return { name, kind: 'string', required, input, error };
    }
    const area = h('textarea', { id, attrs: { rows: '3', spellcheck: 'false', placeholder: type === 'array' ? '[ … ] (JSON)' : '{ … } (JSON)' }, on: { input: onInput } });
    return { name, kind: 'json', required, input: area, error };
  }
}

/** `X or null` (an optional DTO property) is edited as X. */
function nonNull(schema: JsonSchema, doc: ExplorerDocument): Record<string, unknown> {
  if (typeof schema !== 'object') return {};
  if (Array.isArray(schema.anyOf)) {
    const rest = (schema.anyOf as JsonSchema[]).filter((s) => !(typeof s === 'object' && s.type === 'null'));
    if (rest.length === 1) return nonNull(resolveSchema(rest[0], doc), doc);
  }
  return schema;
}

/** A one-line summary of a schema under its input (`string, email`, `integer 1–9`, `AddressDto`). */
function describeSchema(schema: JsonSchema): string {
  if (typeof schema !== 'object') return schema ? 'any value' : 'no value';
  const parts: string[] = [];
  if (schema.type) parts.push(Array.isArray(schema.type) ? (schema.type as string[]).join(' | ') : String(schema.type));
  if (schema.format) parts.push(String(schema.format));
  if (schema.minimum !== undefined || schema.maximum !== undefined) parts.push(`${schema.minimum ?? '…'}–${schema.maximum ?? '…'}`);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) parts.push(`length ${schema.minLength ?? 0}–${schema.maxLength ?? '…'}`);
  if (schema.pattern) parts.push(`/${String(schema.pattern)}/`);
  return parts.join(', ');
}
