import { StreamFormat } from '../decorators/rpc-stream.decorator.js';
import { RpcException } from '../errors/rpc-exceptions.js';
import type { RpcErrorObject } from '../protocol/envelope.js';
import { EventRow } from '../streaming/stream-source.js';
import type { DurableStreamEvent } from './durable-event.js';

/**
 * A durable stream served live on the stream route (`POST <stream.path>`), as rows for the
 * stream writer. SSE keeps the durable vocabulary — `id:` on every event, `event: chunk|progress`
 * and the terminal `done|error|cancelled` — so a client that drops can resume at
 * `GET <durable.path>/<id>` with `Last-Event-ID`. NDJSON and JSON array carry the rows alone: an
 * `error` becomes the format's in-band error frame, `done` and `cancelled` end the stream.
 * Leaving early detaches from the stream; it never cancels it.
 */
export async function* durableLiveRows(events: AsyncIterable<DurableStreamEvent>, format: StreamFormat): AsyncGenerator<EventRow> {
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
      case 'error': {
        const { error } = JSON.parse(event.data) as { error: RpcErrorObject };
        throw new RpcException(error.message, { code: error.code, data: error.data });
      }
      default:
        return;
    }
  }
}
