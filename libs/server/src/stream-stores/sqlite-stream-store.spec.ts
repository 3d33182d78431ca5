/**
 * One process per SQLite file, enforced (docs/durable.md, "Stores"): `open()` takes an exclusive
 * lock on `<filename>-owner` and holds it until `close()`. The cross-process half (a second app
 * refused while the first keeps streaming; a restart right after `kill -9`) is
 * test/crash/sqlite-one-process.e2e-spec.ts.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStreamStore } from './sqlite-stream-store.js';
import { StreamStoreUnavailableError } from './stream-store-unavailable.js';

const LIMITS = { limits: {} };

describe('SqliteStreamStore: one open store per file', () => {
  let dir: string;
  const opened: SqliteStreamStore[] = [];
  const store = (filename: string) => {
    const s = new SqliteStreamStore({ filename });
    opened.push(s);
    return s;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-sqlite-owner-'));
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second store on the same file fails to open, saying one process per file and what to do; once the first closes, it opens', async () => {
    const file = join(dir, 'streams.sqlite');
    const first = store(file);
    await first.open();
    await first.create({ id: 's1', method: 'jobs.tick', owner: null, createdAt: 1, ...LIMITS });

    const second = store(file);
    const refused = await second.open().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(refused).not.toBeInstanceOf(StreamStoreUnavailableError);
    expect((refused as Error).message).toBe(
      `SqliteStreamStore: ${file} is already open in another process (or in another SqliteStreamStore of this one): ` +
        `one process per file (its owner lock, ${file}-owner, is held). Give each process its own file, ` +
        'or use RedisStreamStore for several processes serving one API.',
    );
    expect(((refused as Error).cause as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
    // The refused store holds nothing: it is not open, and the first one is untouched.
    await expect(second.read('s1', 0, 10)).rejects.toThrow('SqliteStreamStore is not open');
    expect(await first.append('s1', [{ id: 0, event: 'chunk', data: '{}' }], false, 2)).toEqual({ ok: true, lastId: 1 });
    expect(await first.recoverInterrupted(new Set(['s1']), 3)).toEqual([]);

    await first.close();
    await second.open();
    // The stream the first store left running is now the second's to recover.
    expect(await second.recoverInterrupted(new Set(), 4)).toEqual(['s1']);
  });

  it('while a store is open its file stays readable by other connections (a backup, the sqlite3 shell)', async () => {
    const file = join(dir, 'streams.sqlite');
    const s = store(file);
    await s.open();
    await s.create({ id: 's1', method: 'jobs.tick', owner: 'ada', createdAt: 1, ...LIMITS });
    const reader = new Database(file, { readonly: true });
    try {
      expect(reader.prepare('SELECT id, owner, status FROM durable_streams').all()).toEqual([{ id: 's1', owner: 'ada', status: 'running' }]);
    } finally {
      reader.close();
    }
  });

  it('two stores on :memory: take no lock', async () => {
    const a = store(':memory:');
    const b = store(':memory:');
    await a.open();
    await b.open();
    expect((await a.checkHealth()).up).toBe(true);
    expect((await b.checkHealth()).up).toBe(true);
  });

  it('an owner lock that cannot be written for another reason fails the open too, naming the lock file', async () => {
    const file = join(dir, 'streams.sqlite');
    mkdirSync(`${file}-owner`);
    const s = store(file);
    await expect(s.open()).rejects.toThrow(`SqliteStreamStore: cannot take the owner lock ${file}-owner: `);
    await expect(s.open()).rejects.not.toBeInstanceOf(StreamStoreUnavailableError);
  });
});
