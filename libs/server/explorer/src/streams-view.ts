import type { DurableStreamSummary } from '@nest-jsonrpc/client';
import { codePanel } from './code-panel.js';
import { clientFor, type ExplorerContext } from './context.js';
import { DurableFollower } from './durable-follower.js';
import { button, clear, h } from './dom.js';
import { OutcomeView } from './exchange.js';

const STATUSES = ['running', 'completed', 'failed', 'cancelled'];

/**
 * The "Streams" panel: the caller's durable streams (`GET <streams>?status=`, the same
 * ownership rules as every durable route) and an attach form — a stream id and the
 * `Last-Event-ID` to resume after (empty: from the first event).
 */
export class StreamsView {
  readonly element: HTMLElement;
  private readonly status = h('select', { id: 'streams-filter', attrs: { 'aria-label': 'Status' } }, h('option', { attrs: { value: '' } }, 'any status'), ...STATUSES.map((s) => h('option', { attrs: { value: s } }, s)));
  private readonly list = h('div', { id: 'streams-list', class: 'table-scroll' });
  private readonly listOutcome = new OutcomeView('streams-');
  private readonly idInput = h('input', { id: 'attach-id', attrs: { type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: 'stream id' } });
  private readonly cursorInput = h('input', { id: 'attach-last-event-id', attrs: { type: 'number', min: '0', step: '1', inputmode: 'numeric', placeholder: 'from the start' } });
  private readonly attachError = h('p', { id: 'attach-error', class: 'bad' });
  private readonly follower: DurableFollower;

  constructor(private readonly ctx: ExplorerContext) {
    this.follower = new DurableFollower(ctx);
    this.follower.element.hidden = true;
    this.status.addEventListener('change', () => void this.refresh());
    const attachForm = h(
      'form',
      { id: 'attach-form', class: 'attach-form', on: { submit: (e) => { e.preventDefault(); this.attachFromForm(); } } },
      h('div', { class: 'field' }, h('label', { attrs: { for: 'attach-id' } }, 'Stream id'), h('div', { class: 'control' }, this.idInput)),
      h('div', { class: 'field' }, h('label', { attrs: { for: 'attach-last-event-id' } }, 'Last-Event-ID'), h('div', { class: 'control' }, this.cursorInput), h('span', { class: 'hint' }, 'resume after this event id; empty: from the first event')),
      h('div', { class: 'actions' }, h('button', { id: 'attach-go', class: 'primary', attrs: { type: 'submit' } }, 'Attach')),
      this.attachError,
    );
    this.element = h(
      'article',
      { class: 'streams-view' },
      h('h2', { id: 'view-title' }, 'Durable streams'),
      h('p', { class: 'muted' }, 'Streams you started (listed by ', h('code', {}, new URL(ctx.streamsUrl ?? '', location.href).pathname), '). Attach to one to follow it from any event.'),
      h('div', { class: 'actions' }, this.status, button('Refresh', () => void this.refresh(), { id: 'streams-refresh' })),
      this.listOutcome.element,
      this.list,
      h('details', { class: 'as-code' }, h('summary', {}, 'This list as code'), codePanel(() => this.listSpec(), 'list-')),
      h('h3', {}, 'Attach by id'),
      attachForm,
      this.follower.element,
    );
    void this.refresh();
  }

  close(): void {
    this.follower.close();
  }

  private listSpec() {
    const headers = this.ctx.requestHeaders();
    if (!headers || !this.ctx.streamsUrl) return undefined;
    return { kind: 'list' as const, rpcUrl: this.ctx.rpcUrl, streamsUrl: this.ctx.streamsUrl, headers: headers.pairs, status: this.status.value || undefined };
  }

  async refresh(): Promise<void> {
    const headers = this.ctx.requestHeaders();
    if (!headers) return;
    this.listOutcome.pending('Listing…');
    clear(this.list);
    try {
      const streams = await clientFor(this.ctx).list({ status: this.status.value || undefined, headers: headers.headers });
      this.listOutcome.clear();
      // No header at all: the page identifies nobody (a cookie could still; the hint says "or").
      this.renderList(streams, headers.pairs.length === 0);
    } catch (error) {
      this.listOutcome.failure(error);
    }
  }

  private renderList(streams: DurableStreamSummary[], anonymous: boolean): void {
    if (streams.length === 0) {
      // The server lists nothing to an anonymous caller (docs/durable.md): "none yet" would be wrong
      // right after starting one without credentials.
      const empty = anonymous
        ? 'Only an identified caller\'s streams are listed: sign in (or send a header that identifies you) to list yours. A stream started anonymously is attached by its id below.'
        : this.status.value
          ? `No ${this.status.value} streams.`
          : 'No streams yet: start a durable method.';
      this.list.append(h('p', { id: 'streams-empty', class: 'muted' }, empty));
      return;
    }
    const newest = [...streams].sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)));
    this.list.append(
      h(
        'table',
        { id: 'streams-table', class: 'rows-table' },
        h('thead', {}, h('tr', {}, ...['Stream', 'Method', 'Status', 'Events', 'Started', ''].map((c) => h('th', {}, c)))),
        h(
          'tbody',
          {},
          ...newest.map((s) =>
            h(
              'tr',
              { attrs: { 'data-stream-id': s.stream_id, 'data-status': s.status } },
              h('td', {}, h('code', {}, s.stream_id)),
              h('td', {}, s.method),
              h('td', {}, h('span', { class: `status-badge ${s.status}` }, s.status)),
              h('td', {}, String(s.events)),
              h('td', {}, new Date(s.created_at).toLocaleTimeString()),
              h('td', {}, button('Attach', () => this.attach(s.stream_id, undefined), { class: 'small attach' })),
            ),
          ),
        ),
      ),
    );
  }

  private attachFromForm(): void {
    const id = this.idInput.value.trim();
    const cursorText = this.cursorInput.value.trim();
    this.attachError.textContent = '';
    if (!id) return void (this.attachError.textContent = 'Enter a stream id.');
    const cursor = cursorText === '' ? undefined : Number(cursorText);
    if (cursor !== undefined && !(Number.isSafeInteger(cursor) && cursor >= 0)) return void (this.attachError.textContent = 'Last-Event-ID is a whole number from 0.');
    this.attach(id, cursor);
  }

  private attach(id: string, lastEventId: number | undefined): void {
    this.idInput.value = id;
    this.cursorInput.value = lastEventId === undefined ? '' : String(lastEventId);
    this.follower.element.hidden = false;
    this.follower.follow(id, lastEventId);
    this.follower.element.scrollIntoView({ block: 'nearest' });
  }
}
