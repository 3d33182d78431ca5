/**
 * An independent SigV4 check (node:crypto, written from the AWS Signature Version 4 spec), so
 * the test does not trust the library that produced the signature: rebuilds the canonical request
 * from what the fake server received and recomputes the signature with the secret key.
 */
import { createHash, createHmac } from 'node:crypto';
import type { RecordedRequest } from './fake-provider.js';

export interface SigV4Check {
  valid: boolean;
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
}

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding, as SigV4 wants it (every character but unreserved ones). */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function verifySigV4(request: RecordedRequest, secretAccessKey: string): SigV4Check {
  const authorization = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) throw new Error(`not a SigV4 authorization header: ${authorization}`);
  const [, accessKeyId, date, region, service, signedHeaderList, signature] = match;
  const signedHeaders = signedHeaderList.split(';');
  const [path, query = ''] = request.path.split('?');
  // Services other than S3 sign the path URI-encoded once more (the path on the wire is already encoded).
  const canonicalUri = path
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=').map((part) => uriEncode(decodeURIComponent(part))).join('='))
    .sort()
    .join('&');
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${String(request.headers[name]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const payloadHash = String(request.headers['x-amz-content-sha256'] ?? sha256(request.body));
  const canonicalRequest = [request.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaderList, payloadHash].join('\n');
  const amzDate = String(request.headers['x-amz-date']);
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  return {
    valid: expected === signature && payloadHash === sha256(request.body),
    accessKeyId,
    date,
    region,
    service,
    signedHeaders,
  };
}
