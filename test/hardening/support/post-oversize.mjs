/**
 * A client in its own process (as users run them: the server's event loop is not the client's),
 * posting `count` bodies of `bytes` to `url`, one after the other, with Node's `fetch` or
 * `node:http` (declared Content-Length or chunked). Prints one JSON line: how each attempt ended.
 *   node post-oversize.mjs <url> <method> <fetch|http|http-chunked> <count> <bytes> [content-type]
 */
import { request } from 'node:http';

const [url, method, mode, countText, bytesText, contentType = 'application/json'] = process.argv.slice(2);
const body = Buffer.alloc(Number(bytesText), 'a');
body.write('{"jsonrpc":"2.0","method":"echo","id":1,"params":["');

async function viaFetch() {
  const res = await fetch(url, { method, headers: { 'content-type': contentType }, body });
  return { status: res.status, connection: res.headers.get('connection'), text: await res.text() };
}

function viaHttp(chunked) {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': contentType };
    if (chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = body.length;
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection ?? null, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (!chunked) return void req.end(body);
    let offset = 0;
    const pump = () => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, (offset += 64 * 1024));
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

const outcomes = [];
for (let i = 0; i < Number(countText); i++) {
  try {
    outcomes.push(mode === 'fetch' ? await viaFetch() : await viaHttp(mode === 'http-chunked'));
  } catch (error) {
    outcomes.push({ error: `${error.code ?? ''} ${error.message} ${error.cause ? `${error.cause.code ?? ''} ${error.cause.message}` : ''}`.trim() });
  }
}
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
