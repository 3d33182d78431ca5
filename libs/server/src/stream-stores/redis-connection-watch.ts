import type { Logger } from '@nestjs/common';

/**
 * Reconnect delay of the Redis connections the module opens: a returning Redis is used again within
 * half a second. ioredis's default backs off to 5 s, which attached clients would wait out in
 * silence and limits would spend uncounted.
 */
export const REDIS_RECONNECT_DELAY = (attempt: number): number => Math.min(attempt * 50, 500);

/**
 * How often a connection asks a restarted Redis that is still loading its data whether it is done
 * (ioredis waits for Redis's own estimate otherwise, a second or more).
 */
export const REDIS_LOADING_RETRY_MS = 100;

/**
 * Longest a command of the `redis` option's connections (rate-limit counters, result cache) waits
 * for its answer. A Redis that stops answering but keeps its connection open (a stopped process,
 * a network cut without a reset) closes nothing, so without a bound a limited or cached call would
 * wait until Redis came back. The same second the health probe gives a PING: a rate-limit script
 * or a cache read answers in well under a millisecond, so a command this late means Redis is gone.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/** The message of a command that got no answer within {@link REDIS_COMMAND_TIMEOUT_MS} (ioredis's own). */
export const COMMAND_TIMED_OUT = 'Command timed out';

/**
 * Feeds one command's outcome to `log`: no answer in time counts as the connection lost (the
 * same warning as a closed connection, once per outage), any answer as the connection back.
 * `bound`: reject the command with {@link COMMAND_TIMED_OUT} after {@link REDIS_COMMAND_TIMEOUT_MS}
 * (for a client that cannot bound a command's wait for its reply itself, such as node-redis).
 */
export function watchCommand<T>(command: Promise<T>, log: RedisOutageLog, bound = false): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const answer = bound
    ? Promise.race([command, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(COMMAND_TIMED_OUT)), REDIS_COMMAND_TIMEOUT_MS)))])
    : command;
  return answer.then(
    (value) => {
      clearTimeout(timer);
      log.back();
      return value;
    },
    (error: unknown) => {
      clearTimeout(timer);
      if (error instanceof Error && error.message === COMMAND_TIMED_OUT) log.lost(COMMAND_TIMED_OUT);
      throw error;
    },
  );
}

/**
 * One warning when a Redis connection is lost and one log line when it is back, through Nest's
 * Logger — whatever the client library, however many reconnect attempts fail in between.
 */
export class RedisOutageLog {
  private down = false;
  private stopped = false;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
    /** What the connection serves, in the messages: `durable streams`, `rate limits`... */
    private readonly what: string,
  ) {}

  lost(reason: string): void {
    if (this.stopped || this.down) return;
    this.down = true;
    this.logger.warn(`Redis connection for ${this.what} lost: ${reason}`);
  }

  back(): void {
    if (this.stopped || !this.down) return;
    this.down = false;
    this.logger.log(`Redis connection for ${this.what} is back`);
  }

  /** The app is closing the connection: what happens to it now is no outage. */
  stop(): void {
    this.stopped = true;
  }
}

/** The events of an ioredis `Redis` or `Cluster` an outage log listens to. */
export interface IoredisEvents {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'close' | 'ready', listener: () => void): unknown;
  off(event: string, listener: (...args: any[]) => void): unknown;
}

/**
 * Feeds an ioredis connection's events to `log`. The `error` listener is also what keeps ioredis
 * from printing "[ioredis] Unhandled error event" on every failed reconnect attempt. Returns the
 * function that removes the listeners (for a client the app owns and keeps using).
 */
export function logIoredisOutages(client: IoredisEvents, log: RedisOutageLog): () => void {
  const onError = (error: Error): void => log.lost(error.message);
  const onClose = (): void => log.lost('connection closed');
  const onReady = (): void => log.back();
  client.on('error', onError);
  client.on('close', onClose);
  client.on('ready', onReady);
  return () => {
    client.off('error', onError);
    client.off('close', onClose);
    client.off('ready', onReady);
  };
}
