import { isResultChunk, ResultChunkAssembler } from '@nest-jsonrpc/client';
import { button, clear, describeError, h } from './dom.js';

/** Strings longer than this are shortened on screen (a base64 chunk is tens of kilobytes). */
const SHOWN_STRING = 300;

/** A row as one line of JSON, long strings shortened with a note of how much was left out. */
export function rowText(row: unknown): string {
  return JSON.stringify(row, (_key, value) => (typeof value === 'string' ? shorten(value) : value)) ?? String(row);
}

function shorten(text: string): string {
  return text.length > SHOWN_STRING ? `${text.slice(0, SHOWN_STRING)}… (+${text.length - SHOWN_STRING} chars)` : text;
}

function cellText(value: unknown): string {
  return typeof value === 'string' ? shorten(value) : rowText(value);
}

/** The text a row carries, when it is a chat-like delta: `delta` or `text`. */
function textOf(row: unknown): string | undefined {
  if (row === null || typeof row !== 'object') return undefined;
  const { delta, text } = row as { delta?: unknown; text?: unknown };
  return typeof delta === 'string' ? delta : typeof text === 'string' ? text : undefined;
}

type RowsMode = 'text' | 'table' | 'raw';

/**
 * Rows as they arrive, three ways: the joined text when rows carry a delta (`delta` or `text`),
 * a table (a column per key), or the raw rows with their arrival time. The first row picks the
 * view; a click picks another. `result_chunk` rows are assembled into a downloadable file.
 */
export class RowsView {
  readonly element: HTMLElement;
  private readonly text = h('pre', { id: 'stream-text', class: 'joined-text', attrs: { 'aria-live': 'polite' } });
  private readonly table = h('table', { id: 'rows-table', class: 'rows-table' });
  private readonly raw = h('ol', { id: 'rows', class: 'raw-rows' });
  private readonly downloads = h('ul', { id: 'downloads', class: 'downloads' });
  private readonly tabs: Record<RowsMode, HTMLButtonElement>;
  private readonly panes: Record<RowsMode, HTMLElement>;
  private columns: string[] = [];
  private tableRows: unknown[] = [];
  private mode: RowsMode | undefined;
  private chosen = false;
  private assembler = new ResultChunkAssembler();
  private readonly offered = new Set<string>();
  private readonly urls: string[] = [];

  constructor() {
    this.panes = { text: this.text, table: h('div', { class: 'table-scroll' }, this.table), raw: this.raw };
    const tab = (mode: RowsMode, label: string) =>
      button(label, () => {
        this.chosen = true;
        this.show(mode);
      }, { id: `rows-view-${mode}`, class: 'tab', attrs: { role: 'tab', 'aria-selected': 'false' } });
    this.tabs = { text: tab('text', 'Text'), table: tab('table', 'Table'), raw: tab('raw', 'Raw rows') };
    this.tabs.text.hidden = true;
    this.element = h('section', { class: 'rows-view' }, h('div', { class: 'tabs', attrs: { role: 'tablist' } }, this.tabs.text, this.tabs.table, this.tabs.raw), this.panes.text, this.panes.table, this.panes.raw, this.downloads);
    this.reset();
  }

  reset(): void {
    for (const url of this.urls.splice(0)) URL.revokeObjectURL(url);
    clear(this.text);
    clear(this.table);
    clear(this.raw);
    clear(this.downloads);
    this.columns = [];
    this.tableRows = [];
    this.assembler = new ResultChunkAssembler();
    this.offered.clear();
    this.chosen = false;
    this.mode = undefined;
    this.tabs.text.hidden = true;
    for (const pane of Object.values(this.panes)) pane.hidden = true;
    this.element.hidden = true;
  }

  get count(): number {
    return this.raw.childElementCount;
  }

  push(row: unknown, ms?: number): void {
    this.element.hidden = false;
    this.raw.append(h('li', {}, h('code', {}, rowText(row)), ms === undefined ? null : h('span', { class: 'muted' }, ` +${ms} ms`)));
    if (isResultChunk(row)) {
      this.chunk(row);
    } else {
      const text = textOf(row);
      if (text !== undefined) {
        this.text.append(text);
        this.tabs.text.hidden = false;
        if (!this.chosen && this.mode !== 'text') this.show('text');
      }
    }
    this.addTableRow(row);
    if (!this.mode) this.show(row !== null && typeof row === 'object' ? 'table' : 'raw');
  }

  private show(mode: RowsMode): void {
    this.mode = mode;
    for (const [name, pane] of Object.entries(this.panes) as Array<[RowsMode, HTMLElement]>) {
      pane.hidden = name !== mode;
      this.tabs[name].setAttribute('aria-selected', String(name === mode));
      this.tabs[name].classList.toggle('active', name === mode);
    }
  }

  private addTableRow(row: unknown): void {
    const keys = row !== null && typeof row === 'object' && !Array.isArray(row) ? Object.keys(row) : ['value'];
    const fresh = keys.filter((k) => !this.columns.includes(k));
    this.tableRows.push(row);
    if (fresh.length || this.tableRows.length === 1) {
      // A new column: the table is redrawn once with it (rows so far get an empty cell).
      this.columns.push(...fresh);
      clear(this.table);
      this.table.append(h('thead', {}, h('tr', {}, h('th', {}, '#'), ...this.columns.map((c) => h('th', {}, c)))), h('tbody'));
      this.tableRows.forEach((r, i) => this.table.tBodies[0].append(this.tableRow(r, i)));
    } else {
      this.table.tBodies[0].append(this.tableRow(row, this.tableRows.length - 1));
    }
  }

  private tableRow(row: unknown, index: number): HTMLTableRowElement {
    const record = row !== null && typeof row === 'object' && !Array.isArray(row) ? (row as Record<string, unknown>) : { value: row };
    return h('tr', {}, h('td', { class: 'muted' }, String(index + 1)), ...this.columns.map((c) => h('td', {}, c in record ? cellText(record[c]) : '')));
  }

  private chunk(row: Parameters<ResultChunkAssembler['push']>[0]): void {
    try {
      this.assembler.push(row);
      const id = row.result_id;
      if (this.offered.has(id) || !this.assembler.isComplete(id)) return;
      this.offered.add(id);
      const bytes = this.assembler.assemble(id);
      this.assembler.delete(id);
      const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/octet-stream' }));
      this.urls.push(url);
      const name = row.encoding === 'utf8' ? `${id}.txt` : `${id}.bin`;
      this.downloads.append(h('li', {}, h('a', { class: 'download', attrs: { href: url, download: name, 'data-result-id': id } }, `Download ${name}`), h('span', { class: 'muted' }, ` ${bytes.length} bytes, assembled from result_chunk rows`)));
    } catch (error) {
      this.downloads.append(h('li', { class: 'bad' }, `Could not assemble ${row.result_id}: ${describeError(error)}`));
    }
  }
}

/**
 * `<progress>` with its label (`42% · computing totals`), fed by anything carrying a numeric
 * `percent` (0–100) and, optionally, a `stage` or `message` string.
 */
export class ProgressView {
  private readonly bar = h('progress', { id: 'progress', attrs: { max: '100', value: '0', 'aria-labelledby': 'progress-label' } });
  private readonly label = h('span', { id: 'progress-label', class: 'progress-label' });
  readonly element = h('div', { class: 'progress' }, this.bar, this.label);

  constructor() {
    this.reset();
  }

  reset(): void {
    this.bar.value = 0;
    this.label.textContent = '';
    this.element.hidden = true;
  }

  /** True when `data` carried progress. */
  update(data: unknown): boolean {
    const { percent, stage, message } = (data ?? {}) as { percent?: unknown; stage?: unknown; message?: unknown };
    if (typeof percent !== 'number' || !Number.isFinite(percent)) return false;
    const value = Math.max(0, Math.min(100, percent));
    const note = typeof stage === 'string' ? stage : typeof message === 'string' ? message : '';
    this.set(value, note);
    return true;
  }

  done(note = 'done'): void {
    this.set(100, note);
  }

  private set(value: number, note: string): void {
    this.element.hidden = false;
    this.bar.value = value;
    this.label.textContent = `${Math.round(value)}%${note ? ` · ${note}` : ''}`;
  }
}
