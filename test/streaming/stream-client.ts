/**
 * Test-side reading of streams over real sockets: node:http, so a test can read incrementally,
 * stall (pause the socket) and vanish (destroy it) exactly when it wants.
 */
import http from 'node:http';

export interface ChunkRecord {
  /** ms since the request was sent */
  at: number;
  text: string;
}

export interface OpenStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  response: http.IncomingMessage;
  request: http.ClientRequest;
  chunks: ChunkRecord[];
  /** Everything received so far. */
  text(): string;
  /** Resolves when the received text satisfies `predicate` (rejects after `timeoutMs`). */
  waitFor(predicate: (text: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the whole body once the server ends the response. */
  ended: Promise<string>;
  /** Drops the connection, as a browser tab being closed would. */
  destroy(): void;
}

/** Sends a request and resolves once the response headers arrived (the stream has started). */
export function openStream(
  baseUrl: string,
  init: { method?: string; path?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<OpenStream> {
  const url = new URL(init.path ?? '/rpc/stream', baseUrl);
  const method = init.method ?? 'POST';
  const payload = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        agent: false,
        headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      },
      (response) => {
        response.setEncoding('utf8');
        const chunks: ChunkRecord[] = [];
        let all = '';
        const watchers = new Set<() => void>();
        response.on('data', (text: string) => {
          chunks.push({ at: performance.now() - started, text });
          all += text;
          for (const w of [...watchers]) w();
        });
        const ended = new Promise<string>((res, rej) => {
          response.on('end', () => res(all));
          response.on('error', rej);
          response.on('aborted', () => rej(new Error('aborted')));
        });
        ended.catch(() => undefined);
        resolve({
          status: response.statusCode!,
          headers: response.headers,
          response,
          request,
          chunks,
          text: () => all,
          waitFor(predicate, timeoutMs = 5000) {
            if (predicate(all)) return Promise.resolve(all);
            return new Promise((res, rej) => {
              const timer = setTimeout(() => {
                watchers.delete(check);
                rej(new Error(`timed out waiting; received so far: ${JSON.stringify(all.slice(0, 500))}`));
              }, timeoutMs);
              const check = () => {
                if (!predicate(all)) return;
                clearTimeout(timer);
                watchers.delete(check);
                res(all);
              };
              watchers.add(check);
            });
          },
          ended,
          destroy: () => request.destroy(),
        });
      },
    );
    request.on('error', reject);
    if (payload !== undefined) request.write(payload);
    request.end();
  });
}

/** A promise the test resolves by hand: lets a producer block until the test says go. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export const call = (method: string, params?: unknown, id: unknown = 1) =>
  params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };
