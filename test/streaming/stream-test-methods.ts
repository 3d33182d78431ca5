/**
 * Helpers to declare one stream method per format from a single implementation, so every suite
 * runs the same cases on NDJSON, SSE and JSON arrays.
 */
import { RpcMethod, RpcStream, StreamFormat, type RpcMethodOptions } from '@nest-jsonrpc/server';

export const FORMATS = [StreamFormat.Ndjson, StreamFormat.Sse, StreamFormat.JsonArray] as const;

/** Defines `<name>.<format>` on `classRef` for each format, all running `impl`. */
export function defineStreamMethods(
  classRef: { prototype: object },
  name: string,
  impl: (this: any, params: any, ctx: any) => unknown,
  options: RpcMethodOptions = {},
): void {
  for (const format of FORMATS) {
    const key = `${name}:${format}`;
    const fn = function (this: unknown, params: unknown, ctx: unknown) {
      return impl.call(this, params, ctx);
    };
    Object.defineProperty(classRef.prototype, key, { value: fn, writable: true, configurable: true, enumerable: false });
    const descriptor = Object.getOwnPropertyDescriptor(classRef.prototype, key)!;
    RpcMethod(`${name}.${format}`, options)(classRef.prototype, key, descriptor);
    RpcStream({ format })(classRef.prototype, key, descriptor);
  }
}

const ERROR_FRAME: Record<StreamFormat, (errorJson: string, rowsBefore: number) => string> = {
  [StreamFormat.Ndjson]: (e) => `{"error":${e}}\n`,
  [StreamFormat.Sse]: (e) => `event: error\ndata: {"error":${e}}\n\n`,
  [StreamFormat.JsonArray]: (e, rows) => `${rows ? ',' : ''}{"_error":${e}}`,
};

/** The exact body a stream of `rows` (JSON texts) then an optional error must produce. */
export function expectedBody(format: StreamFormat, rows: string[], errorJson?: string): string {
  switch (format) {
    case StreamFormat.Ndjson:
      return rows.map((r) => `${r}\n`).join('') + (errorJson ? ERROR_FRAME[format](errorJson, rows.length) : '');
    case StreamFormat.Sse:
      return rows.map((r) => `data: ${r}\n\n`).join('') + (errorJson ? ERROR_FRAME[format](errorJson, rows.length) : '') + 'event: end\ndata: {}\n\n';
    case StreamFormat.JsonArray:
      return `[${rows.join(',')}${errorJson ? ERROR_FRAME[format](errorJson, rows.length) : ''}]`;
  }
  throw new Error(`unknown format ${String(format)}`);
}

export const CONTENT_TYPES: Record<StreamFormat, string> = {
  [StreamFormat.Ndjson]: 'application/x-ndjson; charset=utf-8',
  [StreamFormat.Sse]: 'text/event-stream; charset=utf-8',
  [StreamFormat.JsonArray]: 'application/json; charset=utf-8',
};

/** Did the first row of `format` arrive in `text`? */
export function hasRows(format: StreamFormat, text: string, count: number): boolean {
  const marker = format === StreamFormat.Ndjson ? '\n' : format === StreamFormat.Sse ? '\n\n' : '}';
  return text.split(marker).length - 1 >= count;
}
