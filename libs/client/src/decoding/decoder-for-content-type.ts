import { JsonArrayFrameDecoder } from './json-array-decoder.js';
import { NdjsonFrameDecoder } from './ndjson-decoder.js';
import { SseFrameDecoder } from './sse-decoder.js';
import type { StreamDecoderOptions, StreamFrameDecoder } from './stream-frame.js';

import { mediaTypeOf, StreamFormat, streamFormatOfContentType, STREAM_ACCEPT, STREAM_MEDIA_TYPES } from '@nest-jsonrpc/protocol';

export { mediaTypeOf, STREAM_ACCEPT, STREAM_MEDIA_TYPES };

/** A fresh decoder for a stream answered with `contentType`, or undefined when it is no stream format. */
export function decoderForContentType(contentType: string | null, options: StreamDecoderOptions): StreamFrameDecoder | undefined {
  switch (streamFormatOfContentType(contentType)) {
    case StreamFormat.Ndjson:
      return new NdjsonFrameDecoder(options);
    case StreamFormat.Sse:
      return new SseFrameDecoder(options);
    case StreamFormat.JsonArray:
      return new JsonArrayFrameDecoder(options);
    default:
      return undefined;
  }
}
