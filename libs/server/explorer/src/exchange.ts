import { codeBlock } from './code-block.js';
import { append, clear, describeError, h, pretty, type Child } from './dom.js';

/**
 * Headers typed by the user, one `Name: value` per line; bad lines are reported, not sent.
 * `pairs` keeps the names as typed (a `Headers` lowercases them), for requests written as code.
 */
export function parseHeaderLines(text: string): { headers: Headers; pairs: Array<[string, string]>; problems: string[] } {
  const headers = new Headers();
  const pairs: Array<[string, string]> = [];
  const problems: string[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    try {
      if (!name) throw new Error('expected "Name: value"');
      const value = line.slice(colon + 1).trim();
      headers.set(name, value);
      pairs.push([name, value]);
    } catch (error) {
      problems.push(`line ${i + 1}: ${(error as Error).message}`);
    }
  }
  return { headers, pairs, problems };
}

export interface Exchange {
  status: number;
  statusText: string;
  ms: number;
  headers: Array<[string, string]>;
  request: unknown;
  response: unknown;
  /** The body when it was not JSON. */
  text?: string;
}

/** POSTs one JSON-RPC body and records everything about the exchange. */
export async function postJson(url: string, body: unknown, headers: Headers, signal?: AbortSignal): Promise<Exchange> {
  const sent = new Headers(headers);
  sent.set('content-type', 'application/json');
  sent.set('accept', 'application/json');
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: sent, body: JSON.stringify(body), signal });
  const text = await res.text();
  const ms = Math.round(performance.now() - started);
  const { value, raw } = parseBody(text);
  return { status: res.status, statusText: res.statusText, ms, headers: [...res.headers], request: body, response: value, text: raw };
}

/** A body as JSON when it is JSON, else as text. */
export function parseBody(text: string): { value?: unknown; raw?: string } {
  if (text === '') return {};
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { raw: text };
  }
}

/** The first error object of a response (single or batch). */
export function rpcErrorOf(response: unknown): { code?: number; message?: string; data?: unknown } | undefined {
  if (Array.isArray(response)) return response.map(rpcErrorOf).find((e) => e !== undefined);
  if (typeof response === 'object' && response !== null && 'error' in response) return (response as { error: { code?: number; message?: string } }).error ?? {};
  return undefined;
}

/**
 * What happened to the last attempt, and only the last one: every attempt starts by clearing
 * the area. `data-outcome` says which kind of result it is, each styled apart: `pending`,
 * `ok`, `validation` (stopped in the page, nothing sent), `network` (no answer) and `server`
 * (an HTTP error or a JSON-RPC error object).
 */
export class OutcomeView {
  readonly element: HTMLElement;

  /** `prefix` keeps ids apart when two views share a page (`batch-status`). */
  constructor(private readonly prefix = '') {
    this.element = h('div', { id: `${prefix}output`, class: 'output', attrs: { 'aria-live': 'polite' } });
  }

  private start(kind: string, label: string, status: Child, ok: boolean): void {
    clear(this.element);
    this.element.dataset.outcome = kind;
    this.element.append(h('p', { class: 'status-line' }, h('span', { class: `outcome-kind ${kind}` }, label), ' ', h('span', { id: `${this.prefix}status`, class: ok ? 'ok' : 'bad', attrs: { 'data-outcome': kind } }, status)));
  }

  pending(what = 'Sending…'): void {
    this.start('pending', 'Pending', what, true);
  }

  /** Checks in the page stopped the attempt (`why`: what to fix, and where it is shown); nothing was sent. */
  validation(why: string): void {
    this.start('validation', 'Not sent', why, false);
  }

  network(error: unknown): void {
    this.start('network', 'Network error', `Request failed: ${describeError(error)}`, false);
  }

  /**
   * A failure thrown by `@nest-jsonrpc/client`: an error object from the server (a refused
   * stream, an error row, an unknown stream id) or a malformed answer is the server's; anything
   * else (no connection, a timeout) the network's.
   */
  failure(error: unknown): void {
    const name = (error as { name?: string } | null)?.name;
    if (name === 'JsonRpcError' || name === 'JsonRpcProtocolError') this.start('server', 'Server error', `Error: ${describeError(error)}`, false);
    else this.network(error);
  }

  /** An answer from the server: status, timing, the error if any, headers (collapsed), both bodies. */
  exchange(exchange: Exchange): void {
    const error = rpcErrorOf(exchange.response);
    const ok = exchange.status < 300 && !error;
    this.start(ok ? 'ok' : 'server', ok ? 'OK' : 'Server error', `HTTP ${exchange.status}${exchange.statusText ? ` ${exchange.statusText}` : ''} · ${exchange.ms} ms`, ok);
    const p = this.prefix;
    append(
      this.element,
      error && !Array.isArray(exchange.response) ? h('p', { id: `${p}error-summary`, class: 'error-summary' }, `Error ${error.code ?? ''} ${error.message ?? ''}`.replace(/\s+/g, ' ').trim()) : null,
      h('details', { class: 'response-headers' }, h('summary', {}, `Response headers (${exchange.headers.length})`), h('dl', { id: `${p}response-headers` }, ...exchange.headers.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
      codeBlock({ id: `${p}request`, title: 'Request', text: pretty(exchange.request), json: true }),
      codeBlock({ id: `${p}response`, title: 'Response', text: exchange.text ?? (exchange.response === undefined ? '(empty body)' : pretty(exchange.response)), json: exchange.text === undefined && exchange.response !== undefined }),
    );
  }

  append(...children: Child[]): void {
    append(this.element, ...children);
  }

  clear(): void {
    clear(this.element);
    delete this.element.dataset.outcome;
  }
}
