import { JsonArrayFrameDecoder } from './json-array-decoder.js';
import { NdjsonFrameDecoder } from './ndjson-decoder.js';
import { SseFrameDecoder } from './sse-decoder.js';
import type { StreamDecoderOptions, StreamFrameDecoder } from './stream-frame.js';

/** The stream formats of DESIGN §4, by media type (parameters such as `charset` ignored). */
export const STREAM_MEDIA_TYPES = Object.freeze({
  ndjson: 'application/x-ndjson',
  sse: 'text/event-stream',
  jsonArray: 'application/json',
});

/** The `Accept` header a stream request sends. */
export const STREAM_ACCEPT = `${STREAM_MEDIA_TYPES.ndjson}, ${STREAM_MEDIA_TYPES.sse}, ${STREAM_MEDIA_TYPES.jsonArray}`;

export function mediaTypeOf(contentType: string | null): string {
  if (contentType === null) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** A fresh decoder for a stream answered with `contentType`, or undefined when it is no stream format. */
export function decoderForContentType(contentType: string | null, options: StreamDecoderOptions): StreamFrameDecoder | undefined {
  switch (mediaTypeOf(contentType)) {
    case STREAM_MEDIA_TYPES.ndjson:
      return new NdjsonFrameDecoder(options);
    case STREAM_MEDIA_TYPES.sse:
      return new SseFrameDecoder(options);
    case STREAM_MEDIA_TYPES.jsonArray:
      return new JsonArrayFrameDecoder(options);
    default:
      return undefined;
  }
}
