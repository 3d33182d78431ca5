import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { RpcHeader } from '@nest-jsonrpc/protocol';

/** Printable ASCII, no spaces, bounded: anything else a client sends is replaced, not echoed. */
const ACCEPTABLE_ID = /^[\x21-\x7e]{1,200}$/;

/** The request's `X-Request-Id` when it is sane, else a fresh UUID. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const header = headers[RpcHeader.RequestId];
  return typeof header === 'string' && ACCEPTABLE_ID.test(header) ? header : randomUUID();
}
