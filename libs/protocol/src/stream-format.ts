/** How a stream's rows are framed on the wire (docs/streaming.md, "Wire format"). */
export enum StreamFormat {
  Ndjson = 'ndjson',
  Sse = 'sse',
  JsonArray = 'json-array',
}

/** The media type of each format, without parameters. */
export const STREAM_MEDIA_TYPES = Object.freeze({
  ndjson: 'application/x-ndjson',
  sse: 'text/event-stream',
  jsonArray: 'application/json',
});

/** The `Accept` header a stream request sends. */
export const STREAM_ACCEPT = `${STREAM_MEDIA_TYPES.ndjson}, ${STREAM_MEDIA_TYPES.sse}, ${STREAM_MEDIA_TYPES.jsonArray}`;

/** A Content-Type's media type, lower case, parameters (`; charset=...`) dropped. */
export function mediaTypeOf(contentType: string | null | undefined): string {
  if (contentType === null || contentType === undefined) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** The format a Content-Type announces; undefined when it is none of the three. */
export function streamFormatOfContentType(contentType: string | null | undefined): StreamFormat | undefined {
  switch (mediaTypeOf(contentType)) {
    case STREAM_MEDIA_TYPES.ndjson:
      return StreamFormat.Ndjson;
    case STREAM_MEDIA_TYPES.sse:
      return StreamFormat.Sse;
    case STREAM_MEDIA_TYPES.jsonArray:
      return StreamFormat.JsonArray;
    default:
      return undefined;
  }
}
