/**
 * A request the explorer makes, written as code people paste elsewhere: a curl command, a fetch
 * call, or `@nest-jsonrpc/client` code. Pure string building (no DOM), so what is copied is what
 * the page sent: the same URL, headers and body.
 */

export type HeaderPairs = ReadonlyArray<readonly [string, string]>;

interface Endpoints {
  /** Absolute URL of the JSON-RPC endpoint. */
  rpcUrl: string;
  headers: HeaderPairs;
}

export type RequestSpec =
  /** One call or notification on `rpcUrl`; `durable`: it starts a durable stream (client code attaches). */
  | (Endpoints & { kind: 'call'; body: RpcEnvelope; durable?: { streamsUrl: string } })
  | (Endpoints & { kind: 'batch'; body: RpcEnvelope[] })
  | (Endpoints & { kind: 'stream'; streamUrl: string; body: RpcEnvelope })
  /** `GET <streamsUrl>/<id>` with `Last-Event-ID`: the durable stream's events, resumed after that id. */
  | (Endpoints & { kind: 'attach'; streamsUrl: string; streamId: string; lastEventId?: number })
  | (Endpoints & { kind: 'list'; streamsUrl: string; status?: string });

export interface RpcEnvelope {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id?: string | number;
}

export type CodeLanguage = 'curl' | 'fetch' | 'client';

export const CODE_LANGUAGES: ReadonlyArray<{ language: CodeLanguage; label: string }> = [
  { language: 'curl', label: 'curl' },
  { language: 'fetch', label: 'fetch' },
  { language: 'client', label: '@nest-jsonrpc/client' },
];

export function requestCode(spec: RequestSpec, language: CodeLanguage): string {
  if (language === 'curl') return curlOf(spec);
  if (language === 'fetch') return fetchOf(spec);
  return clientCodeOf(spec);
}

interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Array<[string, string]>;
  body?: string;
  /** The answer is a stream: curl must not buffer it, fetch reads it piece by piece. */
  streamed: boolean;
}

/** Headers the protocol sets itself are the request's, not the user's. */
const PROTOCOL_HEADERS = ['content-type', 'accept', 'last-event-id'];

function userHeaders(spec: RequestSpec): Array<[string, string]> {
  return spec.headers.filter(([name]) => !PROTOCOL_HEADERS.includes(name.toLowerCase())).map(([n, v]) => [n, v]);
}

/** The HTTP request a spec stands for, headers in the order the user gave them after the protocol's own. */
export function httpRequestOf(spec: RequestSpec): HttpRequest {
  const user = userHeaders(spec);
  switch (spec.kind) {
    case 'call':
    case 'batch':
      return { method: 'POST', url: spec.rpcUrl, headers: [['Content-Type', 'application/json'], ...user], body: JSON.stringify(spec.body), streamed: false };
    case 'stream':
      return { method: 'POST', url: spec.streamUrl, headers: [['Content-Type', 'application/json'], ...user], body: JSON.stringify(spec.body), streamed: true };
    case 'attach':
      return {
        method: 'GET',
        url: `${spec.streamsUrl}/${encodeURIComponent(spec.streamId)}`,
        headers: [['Accept', 'text/event-stream'], ...(spec.lastEventId === undefined ? [] : [['Last-Event-ID', String(spec.lastEventId)] as [string, string]]), ...user],
        streamed: true,
      };
    case 'list':
      return { method: 'GET', url: spec.status ? `${spec.streamsUrl}?status=${encodeURIComponent(spec.status)}` : spec.streamsUrl, headers: user, streamed: false };
  }
}

/** POSIX shell single quotes: everything literal, a `'` closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function curlOf(spec: RequestSpec): string {
  const request = httpRequestOf(spec);
  const lines = [`curl -sS${request.streamed ? ' -N' : ''} ${shellQuote(request.url)}`];
  for (const [name, value] of request.headers) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (request.body !== undefined) lines.push(`--data-raw ${shellQuote(request.body)}`);
  return lines.join(' \\\n  ');
}

/** A JavaScript literal of a JSON value, indented to sit at `indent`. */
function literal(value: unknown, indent = ''): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);
}

function fetchOf(spec: RequestSpec): string {
  const request = httpRequestOf(spec);
  const headers = Object.fromEntries(request.headers);
  const init = [
    `  method: '${request.method}',`,
    request.headers.length ? `  headers: ${literal(headers, '  ')},` : undefined,
    request.body !== undefined ? `  body: JSON.stringify(${literal(JSON.parse(request.body), '  ')}),` : undefined,
  ].filter((line) => line !== undefined);
  const call = `const response = await fetch(${JSON.stringify(request.url)}, {\n${init.join('\n')}\n});`;
  if (!request.streamed) return `${call}\nconsole.log(response.status, await response.text());`;
  return [
    call,
    '// The answer arrives piece by piece: print each as it comes.',
    'const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();',
    'for (let piece = await reader.read(); !piece.done; piece = await reader.read()) console.log(piece.value);',
  ].join('\n');
}

function clientCodeOf(spec: RequestSpec): string {
  const options: string[] = [`  url: ${JSON.stringify(spec.rpcUrl)},`];
  const base = spec.rpcUrl.replace(/\/+$/, '');
  // Only when they differ from the client's defaults (`<url>/stream`, `<url>/streams`).
  if (spec.kind === 'stream' && spec.streamUrl !== `${base}/stream`) options.push(`  streamUrl: ${JSON.stringify(spec.streamUrl)},`);
  const streamsUrl = spec.kind === 'attach' || spec.kind === 'list' ? spec.streamsUrl : spec.kind === 'call' ? spec.durable?.streamsUrl : undefined;
  if (streamsUrl !== undefined && streamsUrl !== `${base}/streams`) options.push(`  streamsUrl: ${JSON.stringify(streamsUrl)},`);
  const user = userHeaders(spec);
  if (user.length) options.push(`  headers: ${literal(Object.fromEntries(user), '  ')},`);
  const head = [`import { JsonRpcClient } from '@nest-jsonrpc/client';`, '', `const client = new JsonRpcClient({\n${options.join('\n')}\n});`];
  return [...head, ...clientCalls(spec)].join('\n');
}

function argsOf(envelope: RpcEnvelope): string {
  return envelope.params === undefined ? JSON.stringify(envelope.method) : `${JSON.stringify(envelope.method)}, ${literal(envelope.params)}`;
}

function clientCalls(spec: RequestSpec): string[] {
  switch (spec.kind) {
    case 'call':
      if (spec.body.id === undefined) return [`await client.notify(${argsOf(spec.body)});`];
      if (spec.durable) {
        return [
          `const handle = await client.call(${argsOf(spec.body)});`,
          'for await (const event of client.attach(handle.stream_id)) console.log(event.id, event.event, event.data);',
        ];
      }
      return [`const result = await client.call(${argsOf(spec.body)});`, 'console.log(result);'];
    case 'batch': {
      const entries = spec.body.map((e) => ({ method: e.method, ...(e.params === undefined ? {} : { params: e.params }), ...(e.id === undefined ? { notification: true } : {}) }));
      return [`const settled = await client.batch(${literal(entries)});`, 'console.log(settled);'];
    }
    case 'stream':
      return [`for await (const row of client.stream(${argsOf(spec.body)})) console.log(row);`];
    case 'attach': {
      const options = spec.lastEventId === undefined ? '' : `, { lastEventId: ${spec.lastEventId} }`;
      return [`for await (const event of client.attach(${JSON.stringify(spec.streamId)}${options})) console.log(event.id, event.event, event.data);`];
    }
    case 'list':
      return [`console.log(await client.list(${spec.status ? `{ status: ${JSON.stringify(spec.status)} }` : ''}));`];
  }
}
