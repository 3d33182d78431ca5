import { readFile } from 'node:fs/promises';

/** Most bytes read for one document (a generous bound: documents are a few hundred KiB at most). */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

export interface LoadDocumentOptions {
  /** Sent when `source` is a URL (e.g. `Authorization`: the document lists what its caller may call). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** Reads an OpenRPC document from a file path or an http(s) URL and parses its JSON. */
export async function loadOpenRpcDocument(source: string, options: LoadDocumentOptions = {}): Promise<unknown> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const res = await (options.fetch ?? fetch)(source, { headers: { accept: 'application/json', ...options.headers } });
    if (!res.ok) throw new Error(`GET ${source} answered HTTP ${res.status}`);
    text = await res.text();
  } else {
    text = await readFile(source, 'utf8');
  }
  if (text.length > MAX_DOCUMENT_BYTES) throw new Error(`${source} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${source} is not JSON: ${(error as Error).message}`, { cause: error });
  }
}
