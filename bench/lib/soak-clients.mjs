/**
 * SSE subscribers for the `soak` workload, in their own process (started with a raised fd limit;
 * the parent stays responsive and its own sockets do not count):
 *
 *   node soak-clients.mjs hold <sse url> <count>
 *     opens <count> SSE responses (no agent: one socket each), prints `READY <count>` once each
 *     received its first bytes, then holds them until killed.
 *   node soak-clients.mjs watch <sse url> <count> <events> <commits url>
 *     opens <count> subscribers, prints `READY`, records when each `id:` line arrives, and once
 *     every subscriber's response ended prints one JSON line: the delivery latency of every
 *     (subscriber, event) from the commit (GET <commits url>: event id -> epoch ms) to the client,
 *     and each subscriber's events/s (first to last arrival).
 */
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [mode, url, countText, eventsText, commitsUrl] = process.argv.slice(2);
const count = Number(countText);
const epochMs = () => performance.timeOrigin + performance.now();

/** Opens one SSE response; `onChunk(text, at)` for every chunk; resolves at the first one. */
function subscribe(onChunk, onEnd) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      res.setEncoding('utf8');
      let first = true;
      res.on('data', (text) => {
        onChunk?.(text, epochMs());
        if (first) {
          first = false;
          resolve(req);
        }
      });
      res.on('end', () => onEnd?.());
      res.on('error', () => onEnd?.());
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens `count` subscribers, at most 500 connecting at a time. */
async function openAll(make) {
  const opened = [];
  for (let k = 0; k < count; k += 500) {
    opened.push(...(await Promise.all(Array.from({ length: Math.min(500, count - k) }, (_, i) => make(k + i)))));
  }
  return opened;
}

if (mode === 'hold') {
  await openAll(() => subscribe());
  console.log(`READY ${count}`);
  setInterval(() => undefined, 1 << 30);
} else if (mode === 'watch') {
  const events = Number(eventsText);
  const arrivals = Array.from({ length: count }, () => new Float64Array(events + 2));
  let ended = 0;
  let allEnded;
  const done = new Promise((resolve) => (allEnded = resolve));
  await openAll((s) => {
    let tail = '';
    const seen = arrivals[s];
    let finished = false;
    return subscribe(
      (text, at) => {
        const lines = (tail + text).split('\n');
        tail = lines.pop();
        for (const line of lines) if (line.startsWith('id: ')) seen[Number(line.slice(4))] = at;
      },
      () => {
        if (finished) return;
        finished = true;
        if (++ended === count) allEnded();
      },
    );
  });
  console.log('READY');
  await done;
  const commits = await (await fetch(commitsUrl)).json();
  const latencies = [];
  const rates = [];
  let missing = 0;
  for (const seen of arrivals) {
    let first = Infinity;
    let last = 0;
    for (let id = 1; id <= events; id++) {
      if (seen[id] === 0) {
        missing++;
        continue;
      }
      latencies.push(seen[id] - commits[id]);
      first = Math.min(first, seen[id]);
      last = Math.max(last, seen[id]);
    }
    if (last > first) rates.push(events / ((last - first) / 1000));
  }
  // Raw figures (0.1 ms), so the parent can merge several client processes exactly.
  // Writes to a pipe are asynchronous: exit once this one is flushed.
  process.stdout.write(`${JSON.stringify({ missing, latencies: latencies.map((x) => Math.round(x * 10) / 10), rates })}\n`, () => process.exit(0));
} else {
  console.error('usage: soak-clients.mjs hold <url> <count> | watch <url> <count> <events> <commits url>');
  process.exit(2);
}
