export { buildOpenRpcDocument, RPC_DISCOVER_METHOD, type OpenRpcDocumentSource, type OpenRpcMethodSource } from './openrpc-document-builder.js';
export * from './openrpc-document.js';
