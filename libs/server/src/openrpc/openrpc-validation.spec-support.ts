/** The official OpenRPC tooling, as tests use it to check documents. */
import { dereferenceDocument, validateOpenRPCDocument } from '@open-rpc/schema-utils-js';

/** `true`, or the meta-schema's complaint as a string (so a failing expectation shows it). */
export function validateOpenRpc(document: unknown): true | string {
  const result = validateOpenRPCDocument(JSON.parse(JSON.stringify(document)));
  return result === true ? true : String(result.message);
}

/** The document with every `$ref` resolved (rejects when one does not resolve). */
export function dereferenceOpenRpc(document: unknown): Promise<any> {
  return dereferenceDocument(JSON.parse(JSON.stringify(document)));
}
