import type { OptionProblems } from './option-checks.js';

/** Bounds on what one client may cost the server (see docs/limits.md). */
export interface JsonRpcLimitsOptions {
  /**
   * After an answer sent before the request body was read (413 too large, 415 wrong media type):
   * milliseconds the rest of the upload is still read and discarded before the connection
   * closes — nginx's lingering close — so the client, still sending, reads the answer instead of
   * a reset. 0 closes at once. Default 5000.
   */
  lingerMs?: number;
  /** ...and at most this many bytes of it; past that the connection closes. Default 16 MiB. */
  lingerBytes?: number;
  /**
   * Milliseconds from a request's arrival to the last byte of its body, on the module's routes;
   * a body still arriving then (a client trickling it) is answered 408 and its connection closed.
   * 0 = no bound. Default 30000.
   */
  bodyTimeoutMs?: number;
  /**
   * A stream response (live `POST <stream.path>` or a durable attach) whose client has not read
   * for this many milliseconds while the socket's buffer is full is closed (the durable stream runs
   * on; the client can resume). 0 = never. Default 30000.
   */
  stalledWriteMs?: number;
}

export interface ResolvedLimitsOptions {
  readonly lingerMs: number;
  readonly lingerBytes: number;
  readonly bodyTimeoutMs: number;
  readonly stalledWriteMs: number;
}

export const LIMITS_KEYS = ['lingerMs', 'lingerBytes', 'bodyTimeoutMs', 'stalledWriteMs'];

export const DEFAULT_LIMITS: ResolvedLimitsOptions = Object.freeze({ lingerMs: 5_000, lingerBytes: 16 * 1_048_576, bodyTimeoutMs: 30_000, stalledWriteMs: 30_000 });

/** `o`: the `limits` section, its keys already checked. */
export function resolveLimitsOptions(o: JsonRpcLimitsOptions, problems: OptionProblems): ResolvedLimitsOptions {
  const lingerMs = o.lingerMs ?? DEFAULT_LIMITS.lingerMs;
  const lingerBytes = o.lingerBytes ?? DEFAULT_LIMITS.lingerBytes;
  const bodyTimeoutMs = o.bodyTimeoutMs ?? DEFAULT_LIMITS.bodyTimeoutMs;
  const stalledWriteMs = o.stalledWriteMs ?? DEFAULT_LIMITS.stalledWriteMs;
  problems.timerDelay('"limits.lingerMs"', lingerMs);
  problems.integer('"limits.lingerBytes"', lingerBytes, 0);
  problems.timerDelay('"limits.bodyTimeoutMs"', bodyTimeoutMs);
  problems.timerDelay('"limits.stalledWriteMs"', stalledWriteMs);
  return { lingerMs, lingerBytes, bodyTimeoutMs, stalledWriteMs };
}
