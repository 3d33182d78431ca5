import type { IncomingMessage } from 'node:http';
import { BodyArrivalWatch } from './early-answer.js';

/** What the watch reads of a request: whether its body is complete, whether it went away. */
function request(): IncomingMessage & { complete: boolean; destroyed: boolean } {
  return { complete: false, destroyed: false } as IncomingMessage & { complete: boolean; destroyed: boolean };
}

/**
 * The subjects reported late, each with the ms since the test began; `next()` waits for the next
 * one not waited for yet — also when it was reported already (a timer that fires late finds two
 * deadlines passed and reports both in one go).
 */
function lateLog() {
  const began = performance.now();
  const seen: Array<{ subject: string; afterMs: number }> = [];
  let awaited = 0;
  let wake: (() => void) | undefined;
  return {
    seen,
    onLate: (subject: string) => {
      seen.push({ subject, afterMs: performance.now() - began });
      wake?.();
    },
    next: () => {
      const wanted = ++awaited;
      return new Promise<void>((resolve) => {
        wake = () => {
          if (seen.length < wanted) return;
          wake = undefined;
          resolve();
        };
        wake();
      });
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('BodyArrivalWatch: one clock for the bodies of many requests', () => {
  it('reports each late body at its own deadline, and only the late ones', async () => {
    const log = lateLog();
    const watch = new BodyArrivalWatch<string>(120, log.onLate);
    const [first, arrives, second, leaves] = [request(), request(), request(), request()];
    watch.watch(first, 'first');
    const arriving = watch.watch(arrives, 'arrives');
    watch.watch(leaves, 'leaves');
    await pause(60);
    watch.watch(second, 'second');
    watch.arrived(arriving);
    leaves.destroyed = true;
    await log.next();
    await log.next();
    expect(log.seen.map((s) => s.subject)).toEqual(['first', 'second']);
    // Each at its own deadline, never early. Not asserted: a gap between the two — a timer that
    // fires late on a busy machine finds both deadlines passed and reports both in one check.
    expect(log.seen[0].afterMs).toBeGreaterThanOrEqual(119);
    expect(log.seen[1].afterMs).toBeGreaterThanOrEqual(179);
  });

  it('a body complete by its deadline is not late, even if its route never said so', async () => {
    const log = lateLog();
    const watch = new BodyArrivalWatch<string>(50, log.onLate);
    const done = request();
    const late = request();
    watch.watch(done, 'done');
    watch.watch(late, 'late');
    done.complete = true;
    await log.next();
    await pause(100);
    expect(log.seen.map((s) => s.subject)).toEqual(['late']);
  });

  it('a body arriving anywhere in the list (first, middle, last) leaves the others watched', async () => {
    const log = lateLog();
    const watch = new BodyArrivalWatch<string>(40, log.onLate);
    const [a, , c, , e] = (['a', 'b', 'c', 'd', 'e'] as const).map((name) => watch.watch(request(), name));
    watch.arrived(c);
    watch.arrived(a);
    watch.arrived(e);
    // Twice, and none at all: nothing happens.
    watch.arrived(a);
    watch.arrived(undefined);
    // Both are due together: reported by the same check.
    await log.next();
    await pause(80);
    expect(log.seen.map((s) => s.subject)).toEqual(['b', 'd']);
  });

  it('a body reported late is unlinked: its arrival afterwards changes nothing for the others', async () => {
    const log = lateLog();
    const watch = new BodyArrivalWatch<string>(30, log.onLate);
    const late = watch.watch(request(), 'late');
    await log.next();
    const next = watch.watch(request(), 'next');
    watch.arrived(late);
    await log.next();
    expect(log.seen.map((s) => s.subject)).toEqual(['late', 'next']);
    watch.arrived(next);
  });

  it('after the last body arrives the clock stops, and a new request starts it again', async () => {
    const log = lateLog();
    const watch = new BodyArrivalWatch<string>(30, log.onLate);
    const early = watch.watch(request(), 'early');
    watch.arrived(early);
    await pause(60);
    expect(log.seen).toEqual([]);
    watch.watch(request(), 'later');
    await log.next();
    expect(log.seen.map((s) => s.subject)).toEqual(['later']);
  });
});
