import type { DurableStreamAttachment } from '@nest-jsonrpc/client';
import { codeBlock } from './code-block.js';
import { codePanel } from './code-panel.js';
import { clientFor, type ExplorerContext } from './context.js';
import { button, clear, describeError, h, pretty } from './dom.js';
import { rowText, ProgressView, RowsView } from './rows-view.js';

/**
 * Follows one durable stream by id: attaches (`GET <streams>/:id`, resuming after a chosen
 * `Last-Event-ID`), shows every event, drives the progress bar from `progress` events and the
 * rows view from `chunk` events. Detach closes the connection (the stream runs on), Re-attach
 * resumes after the last event seen (no gap, no duplicate), Cancel deletes it. Used after a
 * Start on the method's page and from the Streams panel.
 */
export class DurableFollower {
  readonly element: HTMLElement;
  private streamId: string | undefined;
  private lastEventId: number | undefined;
  private attachment: AbortController | undefined;
  private finished = false;
  private readonly idBox = h('code', { id: 'stream-id' });
  private readonly cursorBox = h('span', { id: 'last-event-id', class: 'muted' });
  private readonly state = h('p', { id: 'durable-state', class: 'muted' }, 'Not attached');
  private readonly events = h('ol', { id: 'events', class: 'events' });
  private readonly eventCount = h('span', {}, 'Events (0)');
  private readonly progress = new ProgressView();
  private readonly rows = new RowsView();
  private readonly answer = h('div', { class: 'cancel-answer' });
  private readonly detachButton = button('Detach', () => this.detach(), { id: 'detach', attrs: { disabled: '' } });
  private readonly reattachButton = button('Re-attach', () => void this.attach(), { id: 'reattach', attrs: { disabled: '' } });
  private readonly cancelButton = button('Cancel', () => void this.cancel(), { id: 'cancel', class: 'danger', attrs: { disabled: '' } });

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h(
      'section',
      { class: 'durable-follower' },
      h('p', { class: 'stream-line' }, 'Stream ', this.idBox, ' ', this.cursorBox),
      h('div', { class: 'actions' }, this.detachButton, this.reattachButton, this.cancelButton),
      this.progress.element,
      this.state,
      this.rows.element,
      h('details', { class: 'events-log', attrs: { open: '' } }, h('summary', {}, this.eventCount), this.events),
      this.answer,
      h('details', { class: 'as-code' }, h('summary', {}, 'This attach as code (resumes after the last event seen)'), codePanel(() => this.attachSpec(), 'attach-')),
    );
  }

  /** Starts following `streamId` after `lastEventId` (none: from the first event). */
  follow(streamId: string, lastEventId?: number): void {
    this.detach(false);
    this.streamId = streamId;
    this.lastEventId = lastEventId;
    this.finished = false;
    this.idBox.textContent = streamId;
    clear(this.events);
    clear(this.answer);
    this.progress.reset();
    this.rows.reset();
    this.showCursor();
    void this.attach();
  }

  /** Stops following (the page moves on): the stream itself runs on. */
  close(): void {
    this.detach(false);
  }

  private attachSpec() {
    const headers = this.ctx.requestHeaders();
    if (!this.streamId || !this.ctx.streamsUrl || !headers) return undefined;
    return { kind: 'attach' as const, rpcUrl: this.ctx.rpcUrl, streamsUrl: this.ctx.streamsUrl, headers: headers.pairs, streamId: this.streamId, lastEventId: this.lastEventId };
  }

  private showCursor(): void {
    this.cursorBox.textContent = this.lastEventId === undefined ? '' : `· last event ${this.lastEventId}`;
    this.eventCount.textContent = `Events (${this.events.childElementCount})`;
  }

  private buttons(): void {
    const attached = this.attachment !== undefined;
    this.detachButton.disabled = !attached;
    this.reattachButton.disabled = attached || this.streamId === undefined || this.finished;
    this.cancelButton.disabled = this.streamId === undefined || this.finished;
  }

  private async attach(): Promise<void> {
    const headers = this.ctx.requestHeaders();
    if (!this.streamId || !headers) return;
    const controller = new AbortController();
    this.attachment = controller;
    const from = this.lastEventId;
    this.state.textContent = from === undefined ? 'Attached' : `Re-attached after event ${from}`;
    this.state.className = 'muted';
    this.buttons();
    let follower: DurableStreamAttachment | undefined;
    let seen = 0;
    try {
      follower = clientFor(this.ctx).attach(this.streamId, { lastEventId: from, signal: controller.signal, headers: headers.headers });
      for await (const event of follower) {
        seen++;
        this.lastEventId = event.id;
        this.events.append(h('li', { attrs: { 'data-event': event.event } }, h('span', { class: 'event-name' }, `#${event.id} ${event.event}`), ' ', h('code', {}, rowText(event.data))));
        if (event.event === 'progress') this.progress.update(event.data);
        if (event.event === 'chunk') this.rows.push(event.data);
        if (event.event === 'done') this.progress.done();
        if (event.event === 'done' || event.event === 'cancelled') {
          this.finished = true;
          this.state.textContent = event.event === 'done' ? 'Done' : 'Cancelled';
        }
        this.showCursor();
      }
      if (!this.finished && !controller.signal.aborted) {
        // 204: the cursor already was the terminal event.
        this.finished = true;
        this.state.textContent = seen === 0 ? `Already finished: no event after ${from ?? 0}` : 'Ended';
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        // An `error` event (JsonRpcError with the stream's error) ends it; a refused attach (unknown id) too.
        this.finished = (error as { name?: string })?.name === 'JsonRpcError';
        this.state.textContent = `Error: ${describeError(error)}`;
        this.state.className = 'bad';
        this.events.append(h('li', { attrs: { 'data-event': 'error' } }, describeError(error)));
        this.showCursor();
      }
    } finally {
      if (this.attachment === controller) this.attachment = undefined;
      this.buttons();
    }
  }

  private detach(say = true): void {
    if (!this.attachment) return;
    this.attachment.abort();
    this.attachment = undefined;
    if (say) this.state.textContent = `Detached after event ${this.lastEventId ?? 0} (the stream keeps running)`;
    this.buttons();
  }

  private async cancel(): Promise<void> {
    const headers = this.ctx.requestHeaders();
    if (!this.streamId || !headers) return;
    clear(this.answer);
    try {
      const answer = await clientFor(this.ctx).cancel(this.streamId, { headers: headers.headers });
      this.answer.append(codeBlock({ id: 'cancel-answer', title: 'DELETE answer', text: pretty(answer), json: true }));
      // Attached, the `cancelled` event says it (and may already have); detached, the answer does.
      if (!this.attachment && !this.finished) {
        this.finished = true;
        this.state.textContent = answer.status === 'cancelled' ? 'Cancelled' : `Already ${answer.status}`;
      }
    } catch (error) {
      this.answer.append(h('p', { class: 'bad' }, `Cancel failed: ${describeError(error)}`));
    }
    this.buttons();
  }
}
