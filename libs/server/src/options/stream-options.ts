import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { JsonRpcStreamOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import type { OptionProblems } from './option-checks.js';

/** Headers every stream carries (live and durable attach) unless `stream.headers` says otherwise. */
export const DEFAULT_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
});

export const STREAM_KEYS = ['enabled', 'path', 'keepAliveMs', 'headers'];

/** Header names are tokens; values must not carry line breaks (response splitting). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_HEADER_VALUE = /[\r\n\0]/;

/** `o`: the `stream` section, its keys already checked. */
export function resolveStreamOptions(o: JsonRpcStreamOptions, rpcPath: string, problems: OptionProblems): ResolvedJsonRpcOptions['stream'] {
  const enabled = o.enabled ?? false;
  problems.boolean('"stream.enabled"', enabled);
  const path = o.path ?? DEFAULT_PATHS.stream;
  problems.path('"stream.path"', path);
  if (enabled && path === rpcPath) problems.push(`"stream.path" must differ from "path" (both are "${rpcPath}")`);
  const keepAliveMs = o.keepAliveMs ?? 15_000;
  problems.timerDelay('"stream.keepAliveMs"', keepAliveMs);
  return { enabled, path, keepAliveMs, headers: resolveStreamHeaders(o.headers, problems) };
}

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
