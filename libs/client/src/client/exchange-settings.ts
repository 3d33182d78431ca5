/** The client-wide settings every exchange reads (resolved once, in the JsonRpcClient constructor). */
export interface ExchangeSettings {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly maxFrameBytes: number;
}
