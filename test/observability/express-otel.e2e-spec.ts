/**
 * On Express, the module's spans sit under `@opentelemetry/instrumentation-express`'s request
 * span, as they sit under `@fastify/otel`'s on Fastify (fastify-otel.e2e-spec.ts): a call's span
 * is in the request's trace — the incoming `traceparent`, then instrumentation-http's server span,
 * then instrumentation-express's request handler span — batch items are its siblings, a live
 * stream's span lasts to the last row, and the module opens no HTTP span of its own.
 *
 * The app runs in a child process (the built package, `npm run build` first, as `npm test` does)
 * under the instrumentations' ESM hook: they patch `express` when it loads, which jest's module
 * system never lets them see.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { eventually } from '../support/async.js';

interface ExportedSpan {
  name: string;
  kind: number;
  scope: string;
  traceId: string;
  spanId: string;
  parentId?: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

describe('span parents under @opentelemetry/instrumentation-express', () => {
  let child: ChildProcess;
  let url: string;
  let pending: ((spans: ExportedSpan[]) => void) | undefined;

  beforeAll(async () => {
    child = spawn(process.execPath, ['--import', here('./support/express-otel-register.mjs'), here('./support/express-otel-app.mjs')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    url = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the app exited with ${code}`)));
      lines.on('line', (line) => {
        if (line.startsWith('LISTENING ')) resolve(`http://127.0.0.1:${line.slice(10)}`);
        else if (line.startsWith('[')) pending?.(JSON.parse(line));
      });
    });
  }, 60_000);

  afterAll(() => {
    child?.kill('SIGTERM');
  });

  const spans = (): Promise<ExportedSpan[]> =>
    new Promise((resolve) => {
      pending = resolve;
      child.stdin!.write('spans\n');
    });

  /** Spans of one trace, once `done` holds for them. */
  const traceOf = async (traceId: (all: ExportedSpan[]) => string | undefined, done: (trace: ExportedSpan[]) => boolean): Promise<ExportedSpan[]> =>
    eventually(async () => {
      const all = await spans();
      const id = traceId(all);
      const trace = all.filter((s) => s.traceId === id);
      return id !== undefined && done(trace) ? trace : undefined;
    });

  /** The chain of span names from `span` up to its trace's root, within what was exported. */
  const ancestry = (trace: ExportedSpan[], span: ExportedSpan): string[] => {
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const names: string[] = [];
    for (let at = byId.get(span.parentId ?? ''); at; at = byId.get(at.parentId ?? '')) names.push(at.name);
    return names;
  };

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it("a call's span is in the request's trace, under instrumentation-express's request handler span, parented by the incoming traceparent", async () => {
    const res = await post('/rpc', { jsonrpc: '2.0', id: 1, method: 'add', params: { a: 2, b: 3 } }, { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', result: 5, id: 1 });
    const trace = await traceOf(() => TRACE_ID, (t) => t.some((s) => s.name === 'add') && t.some((s) => s.scope === '@opentelemetry/instrumentation-http'));
    const call = trace.find((s) => s.name === 'add')!;
    expect(call.kind).toBe(SpanKind.SERVER);
    expect(call.scope).toBe('@nest-jsonrpc/server');
    // instrumentation-express's request handler span, then instrumentation-http's server span (the
    // root of what this process exported; its parent is the remote one of the traceparent).
    expect(ancestry(trace, call)).toEqual(['request handler', 'POST /rpc']);
    expect(trace.find((s) => s.name === 'request handler')!.scope).toBe('@opentelemetry/instrumentation-express');
    expect(trace.find((s) => s.name === 'POST /rpc')).toMatchObject({ scope: '@opentelemetry/instrumentation-http', parentId: 'b7ad6b7169203331' });
    // No HTTP span from the module: instrumentation-http's is the only one.
    expect(trace.filter((s) => s.scope === '@nest-jsonrpc/server').map((s) => s.name)).toEqual(['add']);
  });

  it('batch items are siblings under the same request handler span, in the request trace', async () => {
    const traceId = 'ba7c4e11ba7c4e11ba7c4e11ba7c4e11';
    await post(
      '/rpc',
      [
        { jsonrpc: '2.0', id: 1, method: 'add', params: { a: 1, b: 1 } },
        { jsonrpc: '2.0', id: 2, method: 'add', params: { a: 2, b: 2 } },
      ],
      { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    );
    const trace = await traceOf(() => traceId, (t) => t.filter((s) => s.name === 'add').length === 2 && t.some((s) => s.name === 'POST /rpc'));
    const calls = trace.filter((s) => s.name === 'add');
    expect(calls[1].parentId).toBe(calls[0].parentId);
    for (const call of calls) expect(ancestry(trace, call)).toEqual(['request handler', 'POST /rpc']);
    expect(trace.filter((s) => s.scope === '@nest-jsonrpc/server').map((s) => s.name)).toEqual(['add', 'add']);
  });

  it('a live stream: its span lasts to the last row and is in the request trace', async () => {
    const traceId = '5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a';
    const res = await post('/rpc/stream', { jsonrpc: '2.0', id: 's', method: 'count', params: { n: 3 } }, { traceparent: `00-${traceId}-b7ad6b7169203331-01` });
    expect(await res.text()).toBe('{"i":1}\n{"i":2}\n{"i":3}\n');
    const trace = await traceOf(() => traceId, (t) => t.some((s) => s.name === 'count') && t.some((s) => s.name === 'POST /rpc/stream'));
    const stream = trace.find((s) => s.name === 'count')!;
    expect(stream.attributes).toMatchObject({ 'jsonrpc.stream.rows': 3, 'jsonrpc.stream.ending': 'completed' });
    expect(ancestry(trace, stream)).toEqual(['request handler', 'POST /rpc/stream']);
  });

  // As on Fastify (fastify-otel.e2e-spec.ts, where the module ends @fastify/otel's request span
  // itself): instrumentation-http ends its server span when the response closes, finished or not.
  it('a live stream its client leaves: the HTTP server span ends, with the status code sent, status unset', async () => {
    const traceId = '1ea7e51ea7e51ea7e51ea7e51ea7e51e';
    const leave = new AbortController();
    const res = await fetch(`${url}/rpc/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'h', method: 'held' }),
      signal: leave.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"i":1')) text += new TextDecoder().decode((await reader.read()).value);
    leave.abort();
    await reader.closed.catch(() => undefined);
    const trace = await traceOf(() => traceId, (t) => t.some((s) => s.name === 'held') && t.some((s) => s.name === 'POST /rpc/stream'));
    expect(trace.find((s) => s.name === 'held')!.attributes['jsonrpc.stream.ending']).toBe('client_gone');
    const server = trace.find((s) => s.name === 'POST /rpc/stream')!;
    expect(server.attributes['http.response.status_code']).toBe(200);
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
  });
});
