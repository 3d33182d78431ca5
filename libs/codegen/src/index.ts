export { generateClient, type GenerateClientOptions } from './generate-client.js';
export { loadOpenRpcDocument, type LoadDocumentOptions } from './load-document.js';
export { runCli } from './cli.js';
export type { OpenRpcDocumentInput, OpenRpcMethodInput, OpenRpcContentDescriptorInput } from './openrpc-input.js';
