import { createParser } from 'eventsource-parser';

export interface ReceivedEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** An attached SSE response read incrementally, parsed with eventsource-parser (as the client does). */
export interface SseSession {
  status: number;
  headers: Headers;
  /** The body as received so far, byte-exact. */
  raw: string;
  /** Every event but the stream's final `event: end` (no id), which is `end`. */
  events: ReceivedEvent[];
  /** The final `event: end` frame (the SSE dialect of docs/streaming.md ends every stream with it). */
  end: ReceivedEvent | undefined;
  comments: string[];
  /** `Date.now()` when each comment arrived. */
  commentTimes: number[];
  retry: number | undefined;
  /** Resolves when the server ends the response (or it is closed here). */
  ended: Promise<void>;
  /** Waits until at least `count` events arrived. */
  waitForEvents(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  waitFor(predicate: (s: SseSession) => boolean, timeoutMs?: number): Promise<void>;
  /** Drops the connection, like a client that goes away. */
  close(): void;
}

/** GET `url` as an SSE client; with `body`, POST it (a durable method called live on the stream route). */
export async function openSse(url: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<SseSession> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: init.body === undefined ? 'GET' : 'POST',
    body: init.body,
    headers: { accept: 'text/event-stream', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    signal: controller.signal,
  });
  let wake: (() => void) | undefined;
  const session: SseSession = {
    status: res.status,
    headers: res.headers,
    raw: '',
    events: [],
    end: undefined,
    comments: [],
    commentTimes: [],
    retry: undefined,
    ended: Promise.resolve(),
    async waitForEvents(count, timeoutMs = 5000) {
      await session.waitFor((s) => s.events.length >= count, timeoutMs);
      return session.events;
    },
    async waitFor(predicate, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(session)) {
        if (finished) throw new Error(`SSE ended before the condition held; got ${session.events.length} event(s): ${session.raw.slice(-300)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out; got ${session.events.length} event(s): ${session.raw.slice(-300)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    },
    close() {
      controller.abort();
    },
  };
  let finished = false;
  const parser = createParser({
    onEvent: (e) => {
      const event = { id: e.id, event: e.event, data: e.data };
      if (e.event === 'end' && e.id === undefined) session.end = event;
      else session.events.push(event);
    },
    onRetry: (ms) => (session.retry = ms),
    onComment: (c) => {
      session.comments.push(c);
      session.commentTimes.push(Date.now());
    },
  });
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  session.ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        session.raw += text;
        parser.feed(text);
        notify();
      }
    } catch {
      // aborted by close()
    } finally {
      finished = true;
      notify();
    }
  })();
  return session;
}
