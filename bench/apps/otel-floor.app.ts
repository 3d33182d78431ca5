/**
 * The floor for "OTel SDK registered vs none": bare Fastify (no Nest, no module) answering the
 * spine's `add` at `POST /rpc`, and with the SDK doing by hand exactly what the module records
 * per call — one SERVER span with the same attributes, active while the handler runs (so the
 * context manager tracks it), parented by the incoming trace, ended at the answer, plus one
 * `rpc.server.call.duration` point. Whatever ratio this floor gets, no instrumentation that
 * records a span and a histogram point per call can beat on this SDK.
 */
import Fastify from 'fastify';
import { context, metrics, propagation, ROOT_CONTEXT, SpanKind, trace, type Span } from '@opentelemetry/api';
import { registerBenchTelemetry } from './otel-sdk.js';

await registerBenchTelemetry(process.env.BENCH_OTEL ?? 'default');

const tracer = trace.getTracer('bench-floor');
const duration = metrics.getMeter('bench-floor').createHistogram('rpc.server.call.duration', { unit: 's' });
const started = new WeakMap<object, { span: Span; start: number; method: string }>();

interface Call {
  jsonrpc: '2.0';
  method: string;
  params: { a: number; b: number };
  id: number | string;
}

const app = Fastify({ logger: false });
app.post('/rpc', (request, reply) => {
  const call = request.body as Call;
  const attributes = { 'rpc.system.name': 'jsonrpc', 'rpc.method': call.method, 'jsonrpc.protocol.version': '2.0', 'jsonrpc.request.id': String(call.id) };
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const span = tracer.startSpan(call.method, { kind: SpanKind.SERVER, attributes }, parent);
  started.set(reply, { span, start: performance.now(), method: call.method });
  return context.with(trace.setSpan(parent, span), async () => ({ jsonrpc: '2.0', result: call.params.a + call.params.b, id: call.id }));
});
app.addHook('onResponse', (_request, reply, done) => {
  const call = started.get(reply);
  if (call) {
    call.span.end();
    duration.record((performance.now() - call.start) / 1000, { 'rpc.system.name': 'jsonrpc', 'rpc.method': call.method });
  }
  done();
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.send?.({ port: (app.server.address() as { port: number }).port });
