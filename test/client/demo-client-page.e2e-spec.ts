/**
 * The demo's /client page in headless Chromium: @nest-jsonrpc/client loaded as browser ES modules
 * (import map onto the built package) calls, batches and streams against the real server.
 */
import { Module } from '@nestjs/common';
import type { Browser } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { JsonRpcModule, MemoryStreamStore } from '@nest-jsonrpc/server';
import { BillingRpc } from '../../apps/demo/src/billing/billing.rpc.js';
import { ClientPageModule } from '../../apps/demo/src/client-page/client-page.module.js';
import { MathRpc } from '../../apps/demo/src/math/math.rpc.js';
import { ReportsRpc } from '../../apps/demo/src/reports/reports.rpc.js';
import { StreamingDemoModule } from '../../apps/demo/src/streaming/streaming-demo.module.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';


@Module({
  imports: [
    JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } }),
    StreamingDemoModule,
    ClientPageModule,
  ],
  providers: [MathRpc, BillingRpc, ReportsRpc],
})
class ClientPageTestModule {}

describeWithChromium('the browser client test')('demo /client page: @nest-jsonrpc/client in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp(ClientPageTestModule);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('serves only .js files of the two vendored packages', async () => {
    expect((await fetch(`${t.url}/vendor/client/index.js`)).status).toBe(200);
    expect((await fetch(`${t.url}/vendor/client/../../../package.json`)).status).toBe(404);
    expect((await fetch(`${t.url}/vendor/other/index.js`)).status).toBe(404);
  });

  it('calls, batches and streams token by token with the client', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    try {
      await page.goto(`${t.url}/client`);
      await page.click('#add');
      await page.waitForFunction(() => document.getElementById('calls')!.textContent !== '');
      expect(await page.textContent('#calls')).toBe('{"sum":5}');

      await page.click('#batch');
      await page.waitForFunction(() => document.getElementById('calls')!.textContent!.startsWith('ok 19'));
      expect(await page.textContent('#calls')).toBe('ok 19\nerror 1001 Insufficient funds');

      await page.fill('#prompt', 'Hi </script> 😀');
      await page.click('#ask button');
      await page.waitForFunction(() => (window as any).tokens.length >= 3);
      const partial = await page.textContent('#reply');
      await page.waitForFunction(() => document.getElementById('status')!.textContent === 'done', undefined, { timeout: 10_000 });
      const full = await page.textContent('#reply');
      expect(full).toBe('You said: "Hi </script> 😀". Streaming works: each word is its own event.');
      expect(partial!.length).toBeLessThan(full!.length);
      const tokens: Array<[number, string]> = await page.evaluate(() => (window as any).tokens);
      expect(tokens.map(([, d]) => d).join('')).toBe(full);
      expect(tokens.at(-1)![0] - tokens[0][0]).toBeGreaterThan(200);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 30_000);

  it('runs NDJSON with break, result_chunk reassembly, durable attach and the error classes in the browser', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    try {
      await page.goto(`${t.url}/client`);
      // The page's import map resolves the package name, as a bundler would.
      const out = await page.evaluate(async () => {
        const m = await import('@nest-jsonrpc/client' as string);
        const c = new m.JsonRpcClient({ url: '/rpc' });
        const seqs: number[] = [];
        for await (const row of c.stream('logs.tail', { intervalMs: 10 })) {
          seqs.push(row.seq);
          if (seqs.length === 3) break;
        }
        const bytes: Uint8Array = await c.stream('files.download', { size: 50_000, chunkSize: 999 }).collectResult();
        const intact = bytes.every((v, i) => v === ((i * 31 + 7) & 0xff));
        const { stream_id } = await c.call('report.generate', { steps: 3, delayMs: 20 });
        const events: string[] = [];
        for await (const e of c.attach(stream_id)) events.push(`${e.id}:${e.event}`);
        const kinds: string[] = [];
        for (const attempt of [
          () => c.call('no.such'),
          () => new m.JsonRpcClient({ url: '/no-such-endpoint' }).call('x'),
          () => new m.JsonRpcClient({ url: 'http://127.0.0.1:9/rpc' }).call('x'),
        ]) {
          try {
            await attempt();
            kinds.push('resolved');
          } catch (caught) {
            const e = caught as { code?: number; status?: number };
            kinds.push(
              e instanceof m.JsonRpcError ? `JsonRpcError ${e.code}`
                : e instanceof m.JsonRpcProtocolError ? `JsonRpcProtocolError ${e.status}`
                  : e instanceof m.JsonRpcTransportError ? 'JsonRpcTransportError' : String(e),
            );
          }
        }
        return { seqs, length: bytes.length, intact, events, kinds };
      });
      expect(out).toEqual({
        seqs: [1, 2, 3],
        length: 50_000,
        intact: true,
        events: ['1:progress', '2:progress', '3:progress', '4:chunk', '5:done'],
        kinds: ['JsonRpcError -32601', 'JsonRpcProtocolError 404', 'JsonRpcTransportError'],
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 30_000);
});
