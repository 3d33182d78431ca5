/**
 * The demo's chat page in headless Chromium: `chat.stream` arrives token by token through a real
 * browser EventSource (GET /rpc/stream), and the `end` event stops the browser from reconnecting.
 */
import { Module } from '@nestjs/common';
import type { Browser } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { StreamingDemoModule } from '../../apps/demo/src/streaming/streaming-demo.module.js';
import { onEveryRequest, startTestApp, type TestApp } from '../support/rpc-test-app.js';


@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } }), StreamingDemoModule] })
class DemoStreamingModule {}

describeWithChromium('the browser EventSource test')('demo chat page in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  const streamRequests: string[] = [];

  beforeAll(async () => {
    t = await startTestApp(DemoStreamingModule, (app) => {
      onEveryRequest(app, (request) => {
        if (request.url.startsWith('/rpc/stream')) streamRequests.push(`${request.method} ${request.url}`);
      });
    });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows chat.stream arriving token by token, then closes the EventSource on `end`', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/`);
      await page.fill('#prompt', 'Hi </script> 😀');
      await page.click('button');
      // Mid-stream: some tokens are shown, not all of them.
      await page.waitForFunction(() => (window as any).tokens.length >= 3);
      const partial = await page.textContent('#reply');
      expect(partial!.startsWith('You said: ')).toBe(true);
      await page.waitForFunction(() => document.getElementById('status')!.textContent === 'done', undefined, { timeout: 10_000 });
      const full = await page.textContent('#reply');
      expect(full).toBe('You said: "Hi </script> 😀". Streaming works: each word is its own event.');
      expect(partial!.length).toBeLessThan(full!.length);

      const tokens: Array<[number, string]> = await page.evaluate(() => (window as any).tokens);
      expect(tokens.map(([, delta]) => delta).join('')).toBe(full);
      // 12 tokens 40 ms apart at the server: arrivals spread over time, not one burst.
      const spread = tokens.at(-1)![0] - tokens[0][0];
      expect(spread).toBeGreaterThan(200);
      const gaps = tokens.slice(1).map(([at], i) => at - tokens[i][0]);
      expect(gaps.filter((gap) => gap > 15).length).toBeGreaterThanOrEqual(8);

      // `end` closed the source: the browser does not reconnect and ask again.
      await page.waitForTimeout(3500);
      expect(streamRequests.filter((r) => r.startsWith('GET /rpc/stream?method=chat.stream'))).toHaveLength(1);
      expect(await page.textContent('#status')).toBe('done');
    } finally {
      await page.close();
    }
  }, 30_000);
});
