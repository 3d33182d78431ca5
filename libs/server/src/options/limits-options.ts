import { check } from './option-checks.js';
import { OptionSection } from './option-section.js';

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

export const DEFAULT_LIMITS: ResolvedLimitsOptions = Object.freeze({ lingerMs: 5_000, lingerBytes: 16 * 1_048_576, bodyTimeoutMs: 30_000, stalledWriteMs: 30_000 });

/** The `limits` section. */
export const limitsSection = new OptionSection<JsonRpcLimitsOptions, ResolvedLimitsOptions>('limits', {
  lingerMs: {
    default: DEFAULT_LIMITS.lingerMs,
    check: check.timerDelay(),
    doc: 'after a 413/415 sent before the body was read, how long the rest of the upload is still read and discarded so the client reads the answer ([docs/limits.md](docs/limits.md))',
  },
  lingerBytes: { default: DEFAULT_LIMITS.lingerBytes, shown: '`16 MiB`', check: check.integer(0), doc: '...and at most this many bytes of it; past that the connection closes' },
  bodyTimeoutMs: { default: DEFAULT_LIMITS.bodyTimeoutMs, check: check.timerDelay(), doc: 'a request body still arriving this long after the request: 408, connection closed; `0` = none' },
  stalledWriteMs: {
    default: DEFAULT_LIMITS.stalledWriteMs,
    check: check.timerDelay(),
    doc: 'a stream reader (live or durable attach) that reads nothing this long while writes wait is dropped; `0` = never ([slow clients](docs/limits.md#slow-and-hostile-clients))',
  },
});
