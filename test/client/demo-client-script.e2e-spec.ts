/**
 * `npm run demo:client` (apps/demo/scripts/demo-client.mjs, the built client imported by package
 * name) against the demo's methods on a real server: every step must succeed and the process must
 * exit 0. Needs the build (`npm test` builds first).
 */
import { Module } from '@nestjs/common';
import { JsonRpcModule, MemoryStreamStore } from '@nest-jsonrpc/server';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MathRpc } from '../../apps/demo/src/math/math.rpc.js';
import { ReportsRpc } from '../../apps/demo/src/reports/reports.rpc.js';
import { StreamingDemoModule } from '../../apps/demo/src/streaming/streaming-demo.module.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

const SCRIPT = fileURLToPath(new URL('../../apps/demo/scripts/demo-client.mjs', import.meta.url));

@Module({
  imports: [
    JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } }),
    StreamingDemoModule,
  ],
  providers: [MathRpc, ReportsRpc],
})
class DemoClientScriptModule {}

function runScript(rpcUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT], { env: { ...process.env, RPC_URL: rpcUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm run demo:client against the demo methods', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(DemoClientScriptModule);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('runs every step (calls, batch, SSE, NDJSON with break, result chunks, durable attach and cancel) and exits 0', async () => {
    const { code, stdout, stderr } = await runScript(`${t.url}/rpc`);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const line = (label: string) => lines.find((l) => l.startsWith(label))?.slice(29);
    expect(line('math.add {a:2, b:3}')).toBe('{"sum":5}');
    expect(line('math.subtract [42, 23]')).toBe('19');
    expect(line('batch')).toBe('[{"sum":2},6,"(notification)","-32601 Method not found"]');
    expect(line('chat.stream (tokens)')).toBe(
      'You said: "Hello from the client". Streaming works: each word is its own event.  [finish: stop]',
    );
    expect(line('logs.tail (first 3, break)')).toBe('["1 info","2 info","3 warn"]');
    expect(line('files.download')).toBe('100000 bytes reassembled from result_chunk rows, intact');
    expect(line('attach (first 3, detached)')).toBe('["1:progress","2:progress","3:progress"]');
    expect(line('cancel')).toMatch(/^\{"stream_id":"[0-9a-f-]{36}","status":"cancelled"\}$/);
    expect(stdout).not.toContain('not available');
  }, 40_000);
});
