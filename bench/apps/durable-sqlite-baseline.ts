/**
 * Baseline for the `durable` workload: a raw better-sqlite3 loop writing the same rows into the
 * same table with the same pragmas, in grouped transactions of the same size the module uses.
 * `node durable-sqlite-baseline.js <file> <n>` prints `{"events":n,"ms":...}`.
 */
import Database from 'better-sqlite3';

const [file, count] = [process.argv[2], Number(process.argv[3] ?? 100_000)];
const GROUP = 512;
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`CREATE TABLE IF NOT EXISTS durable_events (
  stream_id TEXT NOT NULL, id INTEGER NOT NULL, event TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (stream_id, id)) WITHOUT ROWID`);
const insert = db.prepare('INSERT INTO durable_events (stream_id, id, event, data) VALUES (?, ?, ?, ?)');
const group = db.transaction((streamId: string, from: number, to: number) => {
  for (let k = from; k < to; k++) insert.run(streamId, k + 1, 'chunk', JSON.stringify({ i: k, delta: 'token' }));
});
// Warm the JIT and the file first, as the module app is warmed before it is timed.
const warmId = crypto.randomUUID();
for (let k = 0; k < 20_000; k += GROUP) group(warmId, k, Math.min(20_000, k + GROUP));
const streamId = crypto.randomUUID();
const began = process.hrtime.bigint();
for (let k = 0; k < count; k += GROUP) group(streamId, k, Math.min(count, k + GROUP));
const ms = Number(process.hrtime.bigint() - began) / 1e6;
db.close();
console.log(JSON.stringify({ events: count, ms }));
