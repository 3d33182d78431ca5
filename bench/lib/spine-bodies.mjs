/**
 * The request bodies of the spine workloads, one copy for the rate benchmark
 * (workloads/spine.mjs) and the instruction counts (instructions.mjs): `echo` and `add`, the
 * methods every spine server serves (baseline/rpc-dispatch.mjs, apps/spine.app.ts).
 */
export const ONE_CALL = JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: 1 });

/** Twenty calls, `echo` and `add` alternating, each with its own id. */
export const BATCH_OF_20 = JSON.stringify(
  Array.from({ length: 20 }, (_, i) =>
    i % 2 ? { jsonrpc: '2.0', method: 'add', params: { a: i, b: 1 }, id: i } : { jsonrpc: '2.0', method: 'echo', params: { i }, id: i },
  ),
);

export const NOTIFICATION = JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 } });

export const ONE_MB_ECHO = JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { blob: 'x'.repeat(1024 * 1024 - 100) }, id: 1 });
