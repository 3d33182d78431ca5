import { clientFor, type ExplorerContext, type RequestHeaders } from './context.js';
import { DurableFollower } from './durable-follower.js';
import { button, clear, h } from './dom.js';
import { postJson, type OutcomeView } from './exchange.js';
import type { ExplorerMethod } from './openrpc-view.js';
import { ProgressView, RowsView } from './rows-view.js';

/** What a method's page gives its stream panel: the params (null: not valid, the form says why) and where results go. */
export interface AttemptInputs {
  /** The headers and params of a new attempt, or undefined when either is not valid (the page says why). */
  attempt(): { headers: RequestHeaders; params: unknown } | undefined;
  output: OutcomeView;
}

/**
 * A live stream: rows appear as they arrive (as text, a table or raw rows), with the progress
 * bar when rows carry a `percent`; Stop aborts the request (the server's `ctx.signal` fires).
 */
export function liveStreamPanel(method: ExplorerMethod, ctx: ExplorerContext, inputs: AttemptInputs): HTMLElement {
  const rows = new RowsView();
  const progress = new ProgressView();
  const state = h('p', { id: 'stream-state', class: 'muted' }, 'Not started');
  const headersBox = h('dl', { id: 'stream-headers' });
  const headersDetails = h('details', { class: 'response-headers' }, h('summary', {}, 'Response headers'), headersBox);
  headersDetails.hidden = true;
  let controller: AbortController | undefined;
  const stop = button('Stop', () => controller?.abort(), { id: 'stream-stop', attrs: { disabled: '' } });
  const start = button('Start stream', () => void run(), { id: 'stream-start', class: 'primary' });

  async function run() {
    rows.reset();
    progress.reset();
    clear(headersBox);
    headersDetails.hidden = true;
    inputs.output.clear();
    const attempt = inputs.attempt();
    if (!attempt) {
      state.textContent = 'Not started';
      return;
    }
    controller = new AbortController();
    start.disabled = true;
    stop.disabled = false;
    state.textContent = 'Streaming…';
    state.className = 'muted';
    const started = performance.now();
    const stream = clientFor(ctx, method['x-stream']!.path).stream(method.name, attempt.params as never, { signal: controller.signal, headers: attempt.headers.headers });
    try {
      for await (const row of stream) {
        if (headersDetails.hidden && stream.headers) {
          stream.headers.forEach((v, k) => headersBox.append(h('dt', {}, k), h('dd', {}, v)));
          headersDetails.hidden = false;
        }
        rows.push(row, Math.round(performance.now() - started));
        progress.update(row);
      }
      state.textContent = `Ended (${stream.endReason ?? 'end'}) after ${stream.rowCount} rows`;
    } catch (error) {
      const name = (error as Error)?.name;
      if (controller.signal.aborted || name === 'AbortError') {
        state.textContent = `Stopped after ${stream.rowCount} rows`;
      } else {
        state.textContent = `Failed after ${stream.rowCount} rows`;
        state.className = 'bad';
        inputs.output.failure(error);
      }
    } finally {
      start.disabled = false;
      stop.disabled = true;
    }
  }

  return h('section', { class: 'stream' }, h('div', { class: 'actions' }, start, stop), state, progress.element, headersDetails, rows.element);
}

/**
 * A durable stream: Start answers a handle at once (shown as the exchange), then the page
 * follows it (see DurableFollower).
 */
export function durableStreamPanel(method: ExplorerMethod, ctx: ExplorerContext, inputs: AttemptInputs): { element: HTMLElement; follower: DurableFollower } {
  const follower = new DurableFollower(ctx);
  follower.element.hidden = true;
  const startButton = button('Start durable stream', () => void start(), { id: 'durable-start', class: 'primary' });

  async function start() {
    follower.close();
    inputs.output.clear();
    const attempt = inputs.attempt();
    if (!attempt) return;
    inputs.output.pending('Starting…');
    try {
      const exchange = await postJson(ctx.rpcUrl, { jsonrpc: '2.0', method: method.name, ...(attempt.params === undefined ? {} : { params: attempt.params }), id: 1 }, attempt.headers.headers);
      inputs.output.exchange(exchange);
      const streamId = (exchange.response as { result?: { stream_id?: unknown } } | undefined)?.result?.stream_id;
      if (typeof streamId !== 'string') return;
      follower.element.hidden = false;
      follower.follow(streamId);
    } catch (error) {
      inputs.output.network(error);
    }
  }

  return { element: h('section', { class: 'durable' }, h('div', { class: 'actions' }, startButton), follower.element), follower };
}
