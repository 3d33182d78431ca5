import { clear, h, pretty } from './dom.js';

/** Headers typed by the user, one `Name: value` per line; bad lines are reported, not sent. */
export function parseHeaderLines(text: string): { headers: Headers; problems: string[] } {
  const headers = new Headers();
  const problems: string[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    try {
      if (!name) throw new Error('expected "Name: value"');
      headers.set(name, line.slice(colon + 1).trim());
    } catch (error) {
      problems.push(`line ${i + 1}: ${(error as Error).message}`);
    }
  }
  return { headers, problems };
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
  let response: unknown;
  let raw: string | undefined;
  try {
    response = text === '' ? undefined : JSON.parse(text);
  } catch {
    raw = text;
  }
  return { status: res.status, statusText: res.statusText, ms, headers: [...res.headers], request: body, response, text: raw };
}

/** Shows an exchange: status, timing, response headers, and both envelopes (ids prefixed by `prefix`). */
export function renderExchange(target: HTMLElement, exchange: Exchange, prefix = ''): void {
  clear(target);
  const ok = exchange.status < 300 && !hasError(exchange.response);
  target.append(
    h('p', { id: `${prefix}status`, class: ok ? 'ok' : 'bad' }, `HTTP ${exchange.status}${exchange.statusText ? ` ${exchange.statusText}` : ''} · ${exchange.ms} ms`),
    h('details', { attrs: { open: '' } }, h('summary', {}, 'Response headers'), h('dl', { id: `${prefix}response-headers` }, ...exchange.headers.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
    h('h4', {}, 'Request'),
    h('pre', { id: `${prefix}request` }, pretty(exchange.request)),
    h('h4', {}, 'Response'),
    h('pre', { id: `${prefix}response` }, exchange.text ?? (exchange.response === undefined ? '(empty body)' : pretty(exchange.response))),
  );
}

export function renderFailure(target: HTMLElement, error: unknown, prefix = ''): void {
  clear(target);
  target.append(h('p', { id: `${prefix}status`, class: 'bad' }, `Request failed: ${(error as Error)?.message ?? String(error)}`));
}

function hasError(response: unknown): boolean {
  if (Array.isArray(response)) return response.some(hasError);
  return typeof response === 'object' && response !== null && 'error' in response;
}
