import { codePanel } from './code-panel.js';
import type { BatchEntry, ExplorerContext } from './context.js';
import { button, clear, h } from './dom.js';
import { OutcomeView, postJson, rpcErrorOf } from './exchange.js';
import { rowText } from './rows-view.js';
import type { RpcEnvelope } from './request-code.js';

/** The batch as sent: ids 1, 2, … on calls, none on notifications. */
export function batchBody(entries: readonly BatchEntry[]): RpcEnvelope[] {
  return entries.map((e, i) => ({ jsonrpc: '2.0', method: e.method, ...(e.params === undefined ? {} : { params: e.params }), ...(e.notification ? {} : { id: i + 1 }) }));
}

/**
 * The batch, in the main pane: its entries (each removable), Send, and the answer — the whole
 * exchange, and each entry's own result or error next to it (notifications answer nothing).
 * The entries stay after sending, to send again or change.
 */
export class BatchView {
  readonly element: HTMLElement;
  private readonly list = h('ol', { id: 'batch-list', class: 'batch-list' });
  private readonly output = new OutcomeView('batch-');
  private readonly results = h('ol', { id: 'batch-results', class: 'batch-results' });
  private readonly send = button('Send batch', () => void this.sendBatch(), { id: 'batch-send', class: 'primary' });
  private readonly clearButton = button('Clear', () => this.setEntries([]), { id: 'batch-clear' });

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h(
      'article',
      { class: 'batch-view' },
      h('h2', { id: 'view-title' }, 'Batch'),
      h('p', { class: 'muted' }, 'Calls and notifications added with "Add to batch" on a method, sent as one JSON array.'),
      this.list,
      h('div', { class: 'actions' }, this.send, this.clearButton),
      codePanel(() => this.spec(), 'batch-'),
      this.results,
      this.output.element,
    );
    this.render();
  }

  close(): void {
    // Nothing runs in the background here.
  }

  private spec() {
    const headers = this.ctx.requestHeaders();
    if (!headers || this.ctx.batch.length === 0) return undefined;
    return { kind: 'batch' as const, rpcUrl: this.ctx.rpcUrl, headers: headers.pairs, body: batchBody(this.ctx.batch) };
  }

  private setEntries(entries: BatchEntry[]): void {
    this.ctx.batch.splice(0, this.ctx.batch.length, ...entries);
    this.ctx.batchChanged();
    this.render();
  }

  private render(): void {
    clear(this.list);
    const batch = this.ctx.batch;
    if (batch.length === 0) this.list.append(h('li', { class: 'muted empty' }, 'Empty: open a method and press "Add to batch".'));
    batch.forEach((entry, i) =>
      this.list.append(
        h(
          'li',
          { attrs: { 'data-entry': String(i) } },
          h('code', {}, entry.method),
          entry.notification ? h('span', { class: 'badge' }, 'notification') : h('span', { class: 'muted' }, ` id ${i + 1}`),
          entry.params === undefined ? null : h('code', { class: 'params-preview' }, rowText(entry.params)),
          button('×', () => this.setEntries(batch.filter((_, j) => j !== i)), { class: 'small remove', attrs: { 'aria-label': `Remove ${entry.method}` } }),
        ),
      ),
    );
    this.send.disabled = batch.length === 0;
    this.clearButton.disabled = batch.length === 0;
    this.send.textContent = `Send batch (${batch.length})`;
  }

  private async sendBatch(): Promise<void> {
    clear(this.results);
    const headers = this.ctx.requestHeaders();
    if (!headers || this.ctx.batch.length === 0) return;
    const body = batchBody(this.ctx.batch);
    this.output.pending();
    try {
      const exchange = await postJson(this.ctx.rpcUrl, body, headers.headers);
      this.output.exchange(exchange);
      const answers = Array.isArray(exchange.response) ? (exchange.response as Array<{ id?: unknown; result?: unknown }>) : [];
      body.forEach((envelope, i) => {
        const answer = answers.find((a) => a.id === envelope.id);
        const error = answer && rpcErrorOf(answer);
        const text = envelope.id === undefined ? 'notification: no answer' : !answer ? 'no answer' : error ? `error ${error.code} ${error.message}` : rowText(answer.result);
        this.results.append(h('li', { attrs: { 'data-entry': String(i) }, class: error || (envelope.id !== undefined && !answer) ? 'bad' : '' }, h('code', {}, envelope.method), ' → ', h('code', {}, text)));
      });
    } catch (error) {
      this.output.network(error);
    }
  }
}
