import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '../../dist/http/tick-object-shape.js')).href;

/** Runs `body` in a fresh Node (the built module, V8's natives syntax on) and returns what it printed, parsed. */
function inFreshNode(body: string): unknown {
  const script = `import { createHook } from 'node:async_hooks';\nimport { keepTickObjectShape } from ${JSON.stringify(built)};\n${body}`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out);
}

describe('keepTickObjectShape: one nextTick object kept, so the map of every later one stays alive', () => {
  it('keeps an object of the same map as the ticks queued later, once per process', () => {
    const result = inFreshNode(`
      const kept = keepTickObjectShape();
      const later = [];
      const hook = createHook({ init(id, type, trigger, resource) { if (type === 'TickObject') later.push(resource); } }).enable();
      process.nextTick(() => {});
      process.nextTick((a) => a, 1);
      hook.disable();
      console.log(JSON.stringify({
        kept: typeof kept,
        sameMap: later.map((tick) => %HaveSameMap(kept, tick)),
        once: keepTickObjectShape() === kept,
      }));
    `);
    expect(result).toEqual({ kept: 'object', sameMap: [true, true], once: true });
  });
});
