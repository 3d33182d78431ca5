/**
 * The one error type of the adapters: an HTTP error answer (thrown at the first `next()`, before
 * any event) and an error event inside a stream (thrown after the events before it) both become an
 * `LlmProviderError` carrying the provider's own type, message and body.
 */
export class LlmProviderError extends Error {
  override readonly name = 'LlmProviderError';

  constructor(
    /** The adapter's name (`openai-chat`, `anthropic-messages`, ...). */
    readonly provider: string,
    /**
     * The HTTP status of an error answer; for an error inside a stream, the status the provider
     * reports in it (Gemini's `error.code`, Bedrock's `originalStatusCode`), else undefined.
     */
    readonly status: number | undefined,
    /** The provider's error type or code (`rate_limit_error`, `invalid_api_key`, `ThrottlingException`, ...). */
    readonly type: string,
    message: string,
    /** The error body as received: parsed JSON when it was JSON, else the text. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The error an aborted stream ends with: a DOMException named `AbortError`, whatever the signal's reason. */
export function abortError(signal: AbortSignal | undefined): DOMException {
  const error = new DOMException('The LLM stream was aborted', 'AbortError');
  if (signal?.reason !== undefined) Object.defineProperty(error, 'cause', { value: signal.reason });
  return error;
}
