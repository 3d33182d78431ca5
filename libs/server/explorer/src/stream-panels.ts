import { JsonRpcClient, type DurableStreamAttachment } from '@nest-jsonrpc/client';
import { clear, h, pretty } from './dom.js';
import { postJson, renderExchange, renderFailure } from './exchange.js';
import type { ExplorerMethod } from './openrpc-view.js';

export interface RunContext {
  rpcUrl: string;
  origin: string;
  headers: () => Headers | undefined;
  params: () => unknown | undefined;
  output: HTMLElement;
}

function clientFor(ctx: RunContext, method: ExplorerMethod): JsonRpcClient {
  const stream = method['x-stream']!;
  return new JsonRpcClient({
    url: ctx.rpcUrl,
    streamUrl: new URL(stream.path, ctx.origin).href,
    streamsUrl: new URL(stream.streamsPath ?? `${new URL(ctx.rpcUrl).pathname.replace(/\/+$/, '')}/streams`, ctx.origin).href,
  });
}

/** A live stream: rows appear as they arrive; Stop aborts the request (the server sees the client leave). */
export function liveStreamPanel(method: ExplorerMethod, ctx: RunContext): HTMLElement {
  const rows = h('ol', { id: 'rows' });
  const state = h('p', { id: 'stream-state', class: 'muted' }, 'Not started');
  const headersBox = h('dl', { id: 'stream-headers' });
  let controller: AbortController | undefined;
  const stop = h('button', { id: 'stream-stop', attrs: { type: 'button', disabled: '' }, on: { click: () => controller?.abort() } }, 'Stop');
  const start = h('button', { id: 'stream-start', class: 'primary', attrs: { type: 'button' }, on: { click: () => void run() } }, 'Start stream');

  async function run() {
    const headers = ctx.headers();
    const params = ctx.params();
    if (headers === undefined || params === null) return;
    clear(rows);
    clear(headersBox);
    clear(ctx.output);
    controller = new AbortController();
    start.disabled = true;
    stop.disabled = false;
    state.textContent = 'Streaming…';
    const started = performance.now();
    const stream = clientFor(ctx, method).stream(method.name, params as never, { signal: controller.signal, headers });
    try {
      for await (const row of stream) {
        if (rows.childElementCount === 0 && stream.headers) stream.headers.forEach((v, k) => headersBox.append(h('dt', {}, k), h('dd', {}, v)));
        rows.append(h('li', {}, h('code', {}, JSON.stringify(row)), h('span', { class: 'muted' }, ` +${Math.round(performance.now() - started)} ms`)));
      }
      state.textContent = `Ended (${stream.endReason ?? 'end'}) after ${stream.rowCount} rows`;
    } catch (error) {
      const name = (error as Error)?.name;
      state.textContent = controller.signal.aborted || name === 'AbortError' ? `Stopped after ${stream.rowCount} rows` : `Error: ${describeError(error)}`;
    } finally {
      start.disabled = false;
      stop.disabled = true;
    }
  }

  return h('section', { class: 'stream' }, h('div', { class: 'actions' }, start, stop), state, h('details', {}, h('summary', {}, 'Response headers'), headersBox), rows);
}

/**
 * A durable stream: Start answers a handle at once (shown as an exchange), then the page
 * attaches; progress events drive the bar; Detach closes the connection (the stream keeps
 * running), Re-attach resumes after the last event seen, Cancel deletes it.
 */
export function durableStreamPanel(method: ExplorerMethod, ctx: RunContext): HTMLElement {
  const events = h('ol', { id: 'events' });
  const bar = h('progress', { id: 'progress', attrs: { max: '100', value: '0' } });
  const state = h('p', { id: 'durable-state', class: 'muted' }, 'Not started');
  const idBox = h('code', { id: 'stream-id' });
  let streamId: string | undefined;
  let lastEventId: number | undefined;
  let attachment: AbortController | undefined;
  let finished = false;
  const startButton = h('button', { id: 'durable-start', class: 'primary', attrs: { type: 'button' }, on: { click: () => void start() } }, 'Start durable stream');
  const detachButton = h('button', { id: 'detach', attrs: { type: 'button', disabled: '' }, on: { click: () => detach() } }, 'Detach');
  const reattachButton = h('button', { id: 'reattach', attrs: { type: 'button', disabled: '' }, on: { click: () => void attach() } }, 'Re-attach');
  const cancelButton = h('button', { id: 'cancel', attrs: { type: 'button', disabled: '' }, on: { click: () => void cancel() } }, 'Cancel');

  const buttons = () => {
    const attached = attachment !== undefined;
    detachButton.disabled = !attached;
    reattachButton.disabled = attached || streamId === undefined || finished;
    cancelButton.disabled = streamId === undefined || finished;
  };

  async function start() {
    const headers = ctx.headers();
    const params = ctx.params();
    if (headers === undefined || params === null) return;
    detach();
    clear(events);
    bar.value = 0;
    finished = false;
    streamId = undefined;
    lastEventId = undefined;
    try {
      const exchange = await postJson(ctx.rpcUrl, { jsonrpc: '2.0', method: method.name, ...(params === undefined ? {} : { params }), id: 1 }, headers);
      renderExchange(ctx.output, exchange);
      const result = (exchange.response as { result?: { stream_id?: string } } | undefined)?.result;
      if (!result?.stream_id) {
        state.textContent = 'Not started: see the response';
        return;
      }
      streamId = result.stream_id;
      idBox.textContent = streamId;
      void attach();
    } catch (error) {
      renderFailure(ctx.output, error);
    }
  }

  async function attach() {
    if (!streamId) return;
    const headers = ctx.headers() ?? new Headers();
    const controller = new AbortController();
    attachment = controller;
    state.textContent = lastEventId === undefined ? 'Attached' : `Re-attached after event ${lastEventId}`;
    buttons();
    let follower: DurableStreamAttachment | undefined;
    try {
      follower = clientFor(ctx, method).attach(streamId, { lastEventId, signal: controller.signal, headers });
      for await (const event of follower) {
        lastEventId = event.id;
        events.append(h('li', { attrs: { 'data-event': event.event } }, h('span', { class: 'event-name' }, `#${event.id} ${event.event}`), ' ', h('code', {}, JSON.stringify(event.data))));
        const percent = (event.data as { percent?: unknown } | null)?.percent;
        if (event.event === 'progress' && typeof percent === 'number') bar.value = Math.max(0, Math.min(100, percent));
        if (event.event === 'done') bar.value = 100;
        if (event.event === 'done' || event.event === 'cancelled') {
          finished = true;
          state.textContent = event.event === 'done' ? 'Done' : 'Cancelled';
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        finished = (error as { name?: string })?.name === 'JsonRpcError';
        state.textContent = `Error: ${describeError(error)}`;
        events.append(h('li', { attrs: { 'data-event': 'error' } }, describeError(error)));
      }
    } finally {
      if (attachment === controller) attachment = undefined;
      buttons();
    }
  }

  function detach() {
    if (!attachment) return;
    attachment.abort();
    attachment = undefined;
    state.textContent = `Detached after event ${lastEventId ?? 0} (the stream keeps running)`;
    buttons();
  }

  async function cancel() {
    if (!streamId) return;
    try {
      const answer = await clientFor(ctx, method).cancel(streamId, { headers: ctx.headers() ?? undefined });
      ctx.output.replaceChildren(h('pre', { id: 'cancel-answer' }, pretty(answer)));
      // Attached, the `cancelled` event says it (and may already have); detached, the answer does.
      if (!attachment && !finished) {
        finished = true;
        state.textContent = answer.status === 'cancelled' ? 'Cancelled' : `Already ${answer.status}`;
      }
    } catch (error) {
      renderFailure(ctx.output, error);
    }
    buttons();
  }

  return h(
    'section',
    { class: 'durable' },
    h('div', { class: 'actions' }, startButton, detachButton, reattachButton, cancelButton),
    h('p', {}, 'Stream ', idBox),
    bar,
    state,
    events,
  );
}

function describeError(error: unknown): string {
  const e = error as { code?: number; message?: string };
  return e?.code !== undefined ? `${e.code} ${e.message}` : (e?.message ?? String(error));
}
