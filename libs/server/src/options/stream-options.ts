import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { JsonRpcStreamOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import { check, type OptionProblems } from './option-checks.js';
import { OptionSection } from './option-section.js';

/** Headers every stream carries (live and durable attach) unless `stream.headers` says otherwise. */
export const DEFAULT_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
});

/** Header names are tokens; values must not carry line breaks (response splitting). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_HEADER_VALUE = /[\r\n\0]/;

/** The `stream` section. */
export const streamSection = new OptionSection<JsonRpcStreamOptions, ResolvedJsonRpcOptions['stream']>('stream', {
  enabled: { default: false, check: check.boolean, doc: 'the streaming endpoint ([docs/streaming.md](docs/streaming.md))' },
  path: { default: DEFAULT_PATHS.stream, belowPath: '/stream', check: check.routePath, doc: 'its route' },
  keepAliveMs: { default: 15_000, check: check.timerDelay(), doc: 'SSE `:` comment after this much silence, live streams and durable attaches; `0` = never' },
  headers: {
    resolve: (headers, _label, problems) => resolveStreamHeaders(headers as JsonRpcStreamOptions['headers'], problems),
    shown: '`Cache-Control: no-cache`, `X-Accel-Buffering: no`, `X-Content-Type-Options: nosniff`',
    doc: 'headers of every stream response, merged over the defaults; `null` removes one',
  },
});

function resolveStreamHeaders(headers: JsonRpcStreamOptions['headers'], problems: OptionProblems): Record<string, string> {
  const resolved: Record<string, string> = { ...DEFAULT_STREAM_HEADERS };
  if (headers === undefined) return resolved;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    problems.push('"stream.headers" must be an object of header name -> string (or null to remove a default)');
    return resolved;
  }
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (!HEADER_NAME.test(name)) problems.push(`"stream.headers": invalid header name ${JSON.stringify(name)}`);
    else if (key === 'content-type' || key === 'content-length' || key === 'transfer-encoding') {
      problems.push(`"stream.headers": "${name}" is set by the stream format and cannot be configured`);
    } else if (value === null) delete resolved[key];
    else if (typeof value !== 'string' || UNSAFE_HEADER_VALUE.test(value)) {
      problems.push(`"stream.headers.${name}" must be a string without line breaks, or null`);
    } else resolved[key] = value;
  }
  return resolved;
}
