import { createHook } from 'node:async_hooks';

let kept: object | undefined;

function nothing(): void {}

/**
 * Keeps one of the objects `process.nextTick` queues alive for the life of the process, so that
 * the hidden class (map) every later one gets stays alive too.
 *
 * Why: Node builds each queued tick as an object literal with computed keys
 * (`{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`), and V8 (Node 20)
 * remembers, at each of those keys, the one map it has seen there. Tick objects live for one tick,
 * so a mark-compact that runs while none is queued can free those maps; the next tick object gets
 * new ones, and a site that remembered one map and meets another gives up for good: every later
 * `nextTick` (and the stream and HTTP code that inlines it) defines its properties through the
 * runtime. In the spine benchmark's server that was ~23,000 more instructions per notification
 * (~108,000 instead of ~85,000) in every process it reached — under `valgrind` all of them, at full
 * speed about half (bench/README.md). Holding one tick object holds its map, and through the map's
 * back pointers every map of the chain, so the remembered maps never change.
 *
 * How: the object is handed to async hooks' `init` as the resource of type `TickObject`; a hook is
 * enabled for one `nextTick` call, then disabled (no cost afterwards). It runs as early as the
 * module can: when `JsonRpcModule.forRoot`/`forRootAsync` is called (as the app's root module is
 * declared), and again, doing nothing, when the server mounts its routes — a site that met a
 * second map before then cannot be helped. Once per process; returns the object kept (undefined
 * if this Node hands none over — then nothing changes).
 */
export function keepTickObjectShape(): object | undefined {
  if (kept !== undefined) return kept;
  let captured: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && captured === undefined) captured = resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(nothing);
  } finally {
    hook.disable();
  }
  return (kept = captured);
}
