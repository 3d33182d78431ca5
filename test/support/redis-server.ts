/**
 * Private Redis servers for the tests that kill Redis: a `redis-server` child process on a free
 * port (append-only file in a temp dir, so a restart finds what was acknowledged), killed with
 * SIGKILL and restarted on the same port and data inside the test, or paused (SIGSTOP) and resumed; and a local Redis Cluster of
 * three primaries (`--cluster-enabled yes` + `redis-cli --cluster create`). The shared Redis at
 * REDIS_URL is never touched. Every process started here is killed when the test process exits,
 * even on failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) child.kill('SIGKILL');
});

/** Whether `redis-server` and `redis-cli` are on PATH. */
export function redisBinariesPresent(): boolean {
  return ['redis-server', 'redis-cli'].every((bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0);
}

/**
 * `describe` when redis-server and redis-cli are installed; otherwise `describe.skip` with a loud
 * message — except with REQUIRE_REDIS=1 (CI), where their absence fails the suite.
 */
export function describeWithRedisServer(what: string): jest.Describe {
  if (redisBinariesPresent()) return describe;
  const message = `redis-server/redis-cli are not installed: ${what} cannot run (Debian: apt-get install redis-server).`;
  if (process.env.REQUIRE_REDIS === '1') throw new Error(`${message} (REQUIRE_REDIS=1)`);
  console.warn(`\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`);
  return describe.skip;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits until a PING on `port` answers; gives up early once `gone()` says the server exited. */
async function waitForPing(port: number, timeoutMs: number, gone: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone()) throw new Error(`redis-server on port ${port} exited before it answered`);
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 500 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not yet
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Thrown when a `redis-server` exited because a port it was given was taken meanwhile. */
class PortTakenError extends Error {}

/** How many fresh ports {@link PrivateRedis.start} tries before it gives up. */
const START_ATTEMPTS = 5;

/** One private `redis-server`. */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  /** What the server printed (its log goes to stdout), for the error when it does not come up. */
  private output = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly extraArgs: readonly string[],
  ) {}

  /**
   * Starts one on a free port, with an append-only file (fsync always) in a fresh temp dir.
   * `extraArgs` may be a function, called again for each attempt (a port it names is picked
   * anew). A port found free can be taken before the server binds it — by another test process,
   * or as the local port of an outgoing connection, which the kernel draws from the same range —
   * so a server that exits with "Address already in use" is started again on fresh ports.
   */
  static async start(extraArgs: readonly string[] | (() => Promise<readonly string[]>) = []): Promise<PrivateRedis> {
    for (let attempt = 1; ; attempt++) {
      const args = typeof extraArgs === 'function' ? await extraArgs() : extraArgs;
      const redis = new PrivateRedis(await freePort(), mkdtempSync(join(tmpdir(), 'nest-jsonrpc-redis-')), args);
      try {
        await redis.launch();
        return redis;
      } catch (error) {
        await redis.stop();
        if (!(error instanceof PortTakenError) || attempt === START_ATTEMPTS) throw error;
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  private async launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', ...this.extraArgs],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.output = '';
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-8192));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let exited = false;
    started.add(child);
    child.once('exit', () => {
      exited = true;
      started.delete(child);
      // Exited by itself: nothing left to kill (`kill()` would wait for an exit already past).
      if (this.child === child) this.child = undefined;
    });
    this.child = child;
    try {
      await waitForPing(this.port, 10_000, () => exited);
    } catch (error) {
      const message = `${(error as Error).message}\n${this.output}`;
      throw exited && /address already in use/i.test(this.output) ? new PortTakenError(message, { cause: error }) : new Error(message, { cause: error });
    }
  }

  /** SIGKILL: no shutdown, no save; what the append-only file has is what a restart finds. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /**
   * SIGSTOP: Redis stops answering but every connection stays open, as in a network cut without
   * a reset. `resume()` (SIGCONT) lets it answer again; a stopped server can still be killed.
   */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Starts it again on the same port and data. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('PrivateRedis is still running');
    await this.launch();
  }

  /** Starts it again on the same port with none of its data (as a Redis without an append-only file restarts). */
  async restartEmpty(): Promise<void> {
    if (this.child) throw new Error('PrivateRedis is still running');
    for (const entry of readdirSync(this.dir)) rmSync(join(this.dir, entry), { recursive: true, force: true });
    await this.launch();
  }

  /** Kills it and removes its data. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A local Redis Cluster: three primaries, no replicas, slots spread by `redis-cli --cluster create`. */
export class PrivateRedisCluster {
  private constructor(readonly nodes: PrivateRedis[]) {}

  static async start(): Promise<PrivateRedisCluster> {
    const nodes: PrivateRedis[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        // The cluster bus gets its own free port (the default, port + 10000, may be taken).
        nodes.push(await PrivateRedis.start(async () => ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(await freePort())]));
      }
      const create = spawnSync(
        'redis-cli',
        ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'],
        { encoding: 'utf8', timeout: 30_000 },
      );
      if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}\n${create.stderr}`);
      const cluster = new PrivateRedisCluster(nodes);
      await cluster.waitUntilOk(20_000);
      return cluster;
    } catch (error) {
      await Promise.all(nodes.map((n) => n.stop()));
      throw error;
    }
  }

  /** `[{ host, port }]` for ioredis's `Cluster`. */
  get startupNodes(): Array<{ host: string; port: number }> {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  get urls(): string[] {
    return this.nodes.map((n) => n.url);
  }

  private async waitUntilOk(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(
        this.nodes.map(async (n) => {
          const client = new Redis({ port: n.port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null });
          client.on('error', () => undefined);
          try {
            return /cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO')));
          } catch {
            return false;
          } finally {
            client.disconnect();
          }
        }),
      );
      if (states.every(Boolean)) return;
      if (Date.now() > deadline) throw new Error(`the local Redis Cluster was not ok within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}

/** A TCP proxy to a port whose connections can all be cut (and new ones refused) and later allowed again. */
export class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async open(targetPort: number): Promise<CuttableProxy> {
    const proxy = new CuttableProxy(await freePort(), targetPort);
    await proxy.allow();
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async allow(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
