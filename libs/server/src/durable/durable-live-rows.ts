import { errorJsonOfErrorRow, StreamFormat, type DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { ErrorFrameRow, EventRow } from '../streaming/stream-writer.js';

/**
 * A durable stream served live on the stream route (`POST <stream.path>`), as rows for the
 * stream writer. SSE keeps the durable vocabulary — `id:` on every event, `event: chunk|progress`
 * and the terminal `done|error|cancelled` — so a client that drops can resume at
 * `GET <durable.path>/<id>` with `Last-Event-ID`. NDJSON and JSON array carry the rows alone: an
 * `error` becomes the format's in-band error frame (its stored JSON reused as is), `done` and
 * `cancelled` end the stream. Leaving early detaches from the stream; it never cancels it.
 */
export async function* durableLiveRows(events: AsyncIterable<DurableStreamEvent>, format: StreamFormat): AsyncGenerator<EventRow | ErrorFrameRow> {
  for await (const event of events) {
    if (format === StreamFormat.Sse) {
      yield new EventRow(event.data, { id: event.id, event: event.event });
      continue;
    }
    switch (event.event) {
      case 'chunk':
      case 'progress':
        yield new EventRow(event.data);
        break;
      case 'error':
        yield new ErrorFrameRow(errorJsonOfErrorRow(event.data) ?? INTERNAL_ERROR_JSON);
        return;
      default:
        return;
    }
  }
}

/** For an `error` event some other writer stored in another shape: the stream still ends with an error. */
const INTERNAL_ERROR_JSON = '{"code":-32603,"message":"Internal error"}';
