/**
 * The explorer as a new user meets it: the demo app (apps/demo as `npm start` wires it) in
 * headless Chromium, at phone and desktop widths. Signs in through the demo's bearer login
 * (`auth.login`, marked `explorer.signIn`), keeps the headers across a reload (per tab, or on the
 * device when asked), calls a protected method, runs a batch, a stream and a durable stream
 * (detach, list it in the Streams panel, re-attach by id with a chosen Last-Event-ID), copies
 * requests as curl / fetch / client code and runs them, downloads a result_chunk file, shows
 * every input inside the window at 360, 768 and 1280 px, and refuses a forged token with the
 * server's reason. The demo's own pages link to the explorer without a favicon 404.
 * Screenshots go to test-results/explorer/ (gitignored).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { downloadByte } from '../../apps/demo/src/streaming/streaming-demo.rpc.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { TEST_PLATFORM } from '../support/rpc-test-app.js';
import { startDemoApp, type DemoApp } from './support/demo-app.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
/** One folder per platform: the two jest projects run this file at once. */
const ARTEFACTS = join(ROOT, 'test-results/explorer', TEST_PLATFORM);
const CLIENT_BUILD = join(ROOT, 'libs/client/dist/index.js');

describeWithChromium('the explorer walkthrough on the demo')('the explorer on the demo app, as a new user', () => {
  let t: DemoApp;
  let browser: Browser;
  const pageErrors: string[] = [];
  const failedResponses: string[] = [];
  const requested: string[] = [];
  let scratch: string;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'libs/server/dist/explorer/explorer.js')) || !existsSync(CLIENT_BUILD)) throw new Error('run npm run build first');
    mkdirSync(ARTEFACTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'explorer-demo-'));
    t = await startDemoApp();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs `body` in a fresh browser context (its own storage, clipboard access, downloads) `width` px wide, closed after. */
  async function inContext(width: number, body: (context: BrowserContext) => Promise<void>): Promise<void> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'], acceptDownloads: true });
    try {
      await body(context);
    } finally {
      await context.close();
    }
  }

  async function newPage(context: BrowserContext, path = '/rpc/explorer'): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && !m.text().includes('status of 4') && pageErrors.push(m.text()));
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    page.on('response', (r) => r.status() >= 400 && failedResponses.push(`${r.status()} ${new URL(r.url()).pathname}`));
    await page.goto(`${t.url}${path}`);
    if (path.startsWith('/rpc/explorer')) await page.waitForFunction(() => document.body.dataset.ready === 'true');
    return page;
  }

  const narrow = (page: Page) => page.viewportSize()!.width < 760;
  const text = async (page: Page, selector: string) => (await page.textContent(selector)) ?? '';
  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTEFACTS, `demo-${page.viewportSize()!.width}-${name}.png`), fullPage: true });

  async function open(page: Page, method: string): Promise<void> {
    if (narrow(page)) {
      // The method list is a drawer on a phone: closed, it is off the screen once its slide-out
      // transition (0.18 s, slower on a loaded machine) has run.
      await page.waitForFunction(() => document.getElementById('sidebar')!.getBoundingClientRect().right <= 0);
      await page.click('#menu');
    }
    await page.click(`[data-method="${method}"]`);
    await page.waitForFunction((name) => document.getElementById('method-name')?.firstChild?.textContent === name, method);
    if (narrow(page)) await page.waitForFunction(() => !document.body.classList.contains('drawer-open'));
  }

  /** Every input, select and textarea of the main pane lies inside the window, wide enough to use; nothing scrolls sideways. */
  async function expectInputsInside(page: Page): Promise<void> {
    const width = page.viewportSize()!.width;
    const boxes = await page.$$eval('main input, main select, main textarea', (elements) =>
      elements
        .filter((e) => e.getClientRects().length > 0 && !e.classList.contains('offscreen'))
        .map((e) => {
          const r = e.getBoundingClientRect();
          return { id: e.id || e.getAttribute('type') || e.tagName, left: r.left, right: r.right, width: r.width };
        }),
    );
    expect(boxes.length).toBeGreaterThan(0);
    for (const box of boxes) {
      expect({ ...box, inside: box.left >= 0 && box.right <= width, usable: box.width >= (box.id === 'checkbox' || box.id === 'validate-first' ? 10 : 60) }).toEqual({ ...box, inside: true, usable: true });
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  }

  /** The clipboard after pressing `button`: what "copy" put there. */
  async function copied(page: Page, button: string): Promise<string> {
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.click(button);
    for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      const text = await page.evaluate(() => navigator.clipboard.readText());
      if (text !== '') return text;
    }
    throw new Error(`${button} copied nothing`);
  }

  async function signIn(page: Page): Promise<void> {
    await page.click('#sign-in');
    await page.waitForFunction(() => document.getElementById('method-name')?.firstChild?.textContent === 'auth.login');
    expect(await page.getAttribute('#param-password', 'type')).toBe('password');
    await page.fill('#param-username', 'alice');
    await page.fill('#param-password', 'alice-pw');
    await page.click('#param-password ~ .reveal');
    expect(await page.getAttribute('#param-password', 'type')).toBe('text');
    await page.click('#param-password ~ .reveal');
    await page.click('#call');
    await page.waitForSelector('#use-token');
    await page.click('#use-token');
    await page.waitForSelector('#signed-in');
    await page.waitForSelector('[data-method="account.me"]', { state: 'attached' });
  }

  for (const width of [375, 1280]) {
    it(`at ${width} px: sign in, call a protected method, batch, stream, durable stream with detach/list/attach by id, copy as curl and run it`, async () => {
      await inContext(width, async (context) => {
      const page = await newPage(context);
      expect(await page.$('[data-method="account.me"]')).toBeNull(); // protected: hidden until signed in
      await signIn(page);
      expect(await text(page, '#signed-in')).toBe('Signed in as alice');
      expect(await page.$eval('#method-name', (e) => e.firstChild?.textContent)).toBe('auth.login'); // the selection stayed
      await shot(page, 'signed-in');

      // A protected method, with the token the sign-in put in the headers.
      await open(page, 'account.me');
      expect(await text(page, '#no-params')).toBe('Takes no params.');
      await page.click('#call');
      await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'ok');
      expect(JSON.parse(await text(page, '#response')).result).toEqual({ id: 'alice', roles: ['user', 'admin'] });

      // Copy as curl, run by a shell: the same answer, credentials included.
      const curl = await copied(page, '#copy-curl');
      expect(curl).toMatch(/^curl -sS 'http:\/\/127\.0\.0\.1:\d+\/rpc' \\\n {2}-H 'Content-Type: application\/json' \\\n {2}-H 'Authorization: Bearer [0-9a-f-]{36}' \\\n {2}--data-raw '\{"jsonrpc":"2.0","method":"account.me","id":1\}'$/);
      expect(await text(page, '#code-snippet')).toBe(curl);
      const { stdout } = await run('sh', ['-c', curl], { timeout: 10_000 });
      expect(JSON.parse(stdout)).toEqual({ jsonrpc: '2.0', result: { id: 'alice', roles: ['user', 'admin'] }, id: 1 });

      // A batch of two calls, answered in the main pane.
      await open(page, 'math.add');
      await page.fill('#param-a', '2');
      await page.fill('#param-b', '3');
      await page.click('#batch-add');
      await open(page, 'math.subtract');
      await page.fill('#param-minuend', '42');
      await page.fill('#param-subtrahend', '23');
      await page.click('#batch-add');
      await page.click('#open-batch');
      await page.click('#batch-send');
      await page.waitForSelector('#batch-results li');
      expect(await page.$$eval('#batch-results li', (items) => items.map((li) => li.textContent))).toEqual(['math.add → {"sum":5}', 'math.subtract → 19']);
      const batchBox = (await page.locator('#batch-response').boundingBox())!;
      expect(batchBox.x).toBeGreaterThanOrEqual(0);
      expect(batchBox.x + batchBox.width).toBeLessThanOrEqual(width);
      const batchCurl = await copied(page, '#batch-copy-curl');
      expect(JSON.parse((await run('sh', ['-c', batchCurl], { timeout: 10_000 })).stdout)).toEqual([
        { jsonrpc: '2.0', result: { sum: 5 }, id: 1 },
        { jsonrpc: '2.0', result: 19, id: 2 },
      ]);
      await shot(page, 'batch');

      // A live stream: the rows carry `delta`, so the joined text shows first.
      await open(page, 'chat.stream');
      await page.fill('#param-prompt', 'hi there');
      await page.fill('#param-delayMs', '5');
      await page.click('#stream-start');
      await page.waitForFunction(() => document.getElementById('stream-state')?.textContent?.startsWith('Ended'));
      expect(await text(page, '#stream-text')).toBe('You said: "hi there". Streaming works: each word is its own event.');
      const streamCurl = await copied(page, '#copy-curl');
      expect(streamCurl).toContain(' -N ');
      expect((await run('sh', ['-c', streamCurl], { timeout: 10_000 })).stdout).toContain('"delta":"You "');
      await shot(page, 'stream');

      // A durable stream: start, watch the labelled progress, detach.
      await open(page, 'report.generate');
      await page.fill('#param-steps', '24');
      await page.fill('#param-delayMs', '120');
      await page.click('#durable-start');
      await page.waitForFunction(() => document.querySelectorAll('#events li').length >= 3, undefined, { timeout: 10_000 });
      expect(await text(page, '#progress-label')).toMatch(/^\d+% · collecting invoices$/);
      const streamId = await text(page, '#stream-id');
      await page.click('#detach');

      // The Streams panel lists it (running), and attaches by id after event 2.
      await page.click('#open-streams');
      await page.waitForSelector(`[data-stream-id="${streamId}"]`);
      expect(await page.getAttribute(`[data-stream-id="${streamId}"]`, 'data-status')).toBe('running');
      await page.selectOption('#streams-filter', 'completed');
      await page.waitForFunction(() => document.getElementById('streams-empty') !== null || document.getElementById('streams-table') !== null);
      expect(await page.$(`[data-stream-id="${streamId}"]`)).toBeNull();
      await page.selectOption('#streams-filter', 'running');
      await page.waitForSelector(`[data-stream-id="${streamId}"]`);
      await page.fill('#attach-id', streamId);
      await page.fill('#attach-last-event-id', '2');
      await page.click('#attach-go');
      await page.waitForFunction(() => document.getElementById('durable-state')?.textContent === 'Done', undefined, { timeout: 15_000 });
      const ids = await page.$$eval('#events li .event-name', (items) => items.map((i) => Number(/#(\d+)/.exec(i.textContent!)![1])));
      expect(ids[0]).toBe(3); // resumed after event 2
      expect(ids).toEqual(ids.map((_, i) => i + 3)); // and no gap
      expect(await text(page, '#progress-label')).toBe('100% · done');
      expect(await page.$$eval('#rows-table tbody tr', (rows) => rows.length)).toBe(1); // the report row
      await shot(page, 'streams');

      // The attach as curl: the events after the last one seen, from a shell.
      await page.click('.durable-follower details.as-code summary');
      const attachCurl = await copied(page, '#attach-copy-curl');
      expect(attachCurl).toContain(`/rpc/streams/${streamId}'`);
      expect(attachCurl).toMatch(/-H 'Last-Event-ID: \d+'/);
      const lastSeen = Number(/Last-Event-ID: (\d+)/.exec(attachCurl)![1]);
      const replayFrom = lastSeen - 2;
      const replay = await run('sh', ['-c', attachCurl.replace(`Last-Event-ID: ${lastSeen}`, `Last-Event-ID: ${replayFrom}`)], { timeout: 10_000 });
      expect(replay.stdout).toContain(`id: ${replayFrom + 1}\n`);
      expect(replay.stdout).toContain('event: done');
      });
    }, 90_000);
  }

  it('keeps the headers per tab, or on the device when asked, across reloads', async () => {
    await inContext(1280, async (context) => {
    const page = await newPage(context);
    await signIn(page);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    expect(await text(page, '#signed-in')).toBe('Signed in as alice');
    expect(await page.$('[data-method="account.me"]')).not.toBeNull();
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.length])).toEqual([1, 0]);

    // Another tab: sessionStorage is per tab, so not signed in there.
    const other = await newPage(context);
    expect(await other.$('#signed-in')).toBeNull();
    await other.close();

    // "Remember on this device": localStorage, seen by a new tab.
    await page.click('#headers-toggle');
    await page.check('#remember-headers');
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.length])).toEqual([0, 1]);
    const remembered = await newPage(context);
    expect(await text(remembered, '#signed-in')).toBe('Signed in as alice');
    expect(await remembered.isChecked('#remember-headers')).toBe(true);
    expect(await remembered.$('[data-method="account.me"]')).not.toBeNull();

    // Sign out: the header is gone, the protected methods too, and nothing is remembered.
    // The sign-in link shows at once; the method list changes when the description has been read
    // again (`data-reloaded` counts those reads), so wait for that, not for the link.
    const readsBefore = await remembered.evaluate(() => Number(document.body.dataset.reloaded ?? '0'));
    await remembered.click('#sign-out');
    await remembered.waitForFunction((before) => Number(document.body.dataset.reloaded ?? '0') > before, readsBefore);
    expect(await remembered.$('#sign-in')).not.toBeNull();
    expect(await remembered.$('[data-method="account.me"]')).toBeNull();
    expect(await remembered.evaluate(() => [sessionStorage.length, localStorage.length])).toEqual([0, 0]);
    });
  }, 60_000);

  it('refuses a forged remembered token with the server\'s reason, and still shows the public methods', async () => {
    await inContext(1280, async (context) => {
    await context.addInitScript(() => {
      if (!localStorage.getItem('nest-jsonrpc-explorer/session')) {
        localStorage.setItem('nest-jsonrpc-explorer/session', JSON.stringify({ headers: 'Authorization: Bearer forged', signedIn: { header: 'Authorization', label: 'mallory', method: 'auth.login' } }));
      }
    });
    const page = await newPage(context);
    expect(await text(page, '#document-error')).toContain('The OpenRPC document answered HTTP 403 Forbidden (-32001 Invalid or expired token; call auth.login)');
    expect(await page.$('[data-method="math.add"]')).not.toBeNull();
    expect(await page.$('[data-method="account.me"]')).toBeNull();
    await page.click('#document-error button:has-text("Sign out")');
    await page.waitForFunction(() => document.getElementById('sign-in') !== null);
    expect(await page.inputValue('#headers')).toBe('');
    });
  });

  it('shows a wrong password as a server error, with nothing to sign in with', async () => {
    await inContext(1280, async (context) => {
    const page = await newPage(context, '/rpc/explorer#auth.login');
    await page.fill('#param-username', 'alice');
    await page.fill('#param-password', 'wrong');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'server');
    expect(await text(page, '#error-summary')).toBe('Error -32001 Wrong username or password');
    expect(await page.$('#use-token')).toBeNull();
    });
  });

  for (const width of [360, 768, 1280]) {
    it(`fits ${width} px: every input of a nested form, a durable method and the Streams panel is inside the window`, async () => {
      await inContext(width, async (context) => {
      const page = await newPage(context, '/rpc/explorer#user.update');
      await page.click('[id="param-address-mode"]'); // the nested group as JSON: a textarea
      await expectInputsInside(page);
      await page.click('[id="param-address-mode"]');
      await expectInputsInside(page);
      await shot(page, 'user-update');
      await open(page, 'report.generate');
      await expectInputsInside(page);
      await page.click('#open-streams');
      await page.waitForSelector('#attach-id');
      // Not signed in: the list is empty because the server lists nothing to an anonymous caller.
      await page.waitForSelector('#streams-empty');
      expect(await text(page, '#streams-empty')).toBe(
        "Only an identified caller's streams are listed: sign in (or send a header that identifies you) to list yours. A stream started anonymously is attached by its id below.",
      );
      await expectInputsInside(page);
      await open(page, 'auth.login');
      await expectInputsInside(page);
      await shot(page, 'auth-login');
      });
    });
  }

  it('copies calls as fetch and as @nest-jsonrpc/client code that run in Node', async () => {
    await inContext(1280, async (context) => {
    const page = await newPage(context, '/rpc/explorer#math.add');
    await page.fill('#param-a', '20');
    await page.fill('#param-b', '22');
    const fetchCode = await copied(page, '#copy-fetch');
    writeFileSync(join(scratch, 'fetch.mjs'), fetchCode);
    const fetched = await run(process.execPath, [join(scratch, 'fetch.mjs')], { timeout: 10_000 });
    expect(fetched.stdout).toBe('200 {"jsonrpc":"2.0","result":{"sum":42},"id":1}\n');

    const clientCode = await copied(page, '#copy-client');
    expect(clientCode.startsWith("import { JsonRpcClient } from '@nest-jsonrpc/client';\n")).toBe(true);
    // Run against this checkout's built client (the snippet names the published package).
    writeFileSync(join(scratch, 'client.mjs'), clientCode.replace("'@nest-jsonrpc/client'", `'${pathToFileURL(CLIENT_BUILD).href}'`));
    const called = await run(process.execPath, [join(scratch, 'client.mjs')], { timeout: 10_000 });
    expect(called.stdout).toBe('{ sum: 42 }\n');

    // A stream as client code: every row printed.
    await open(page, 'export.progress');
    await page.fill('#param-steps', '2');
    await page.fill('#param-stepMs', '1');
    const streamCode = await copied(page, '#copy-client');
    writeFileSync(join(scratch, 'stream.mjs'), streamCode.replace("'@nest-jsonrpc/client'", `'${pathToFileURL(CLIENT_BUILD).href}'`));
    const streamed = await run(process.execPath, [join(scratch, 'stream.mjs')], { timeout: 10_000 });
    expect(streamed.stdout).toMatch(/^\{ percent: 50 \}\n\{ percent: 100 \}\n\{\s+done: true,\s+url: '\/exports\/[^']+\.csv'\s+\}\n$/);
    });
  });

  it('assembles result_chunk rows into a file to download', async () => {
    await inContext(1280, async (context) => {
    const page = await newPage(context, '/rpc/explorer#files.download');
    await page.fill('#param-size', '100000');
    await page.fill('#param-chunkSize', '30000');
    await page.click('#stream-start');
    await page.waitForSelector('#downloads a.download');
    expect(await text(page, '#downloads li')).toMatch(/^Download file-[^ ]+\.bin 100000 bytes, assembled from result_chunk rows$/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#downloads a.download')]);
    const file = join(scratch, 'download.bin');
    await download.saveAs(file);
    const bytes = readFileSync(file);
    expect(bytes.length).toBe(100_000);
    expect(bytes.every((b, i) => b === downloadByte(i))).toBe(true);
    });
  });

  it("links the demo's own pages to the explorer, styled, without a favicon 404", async () => {
    await inContext(375, async (context) => {
    for (const path of ['/', '/client']) {
      const page = await newPage(context, path);
      expect(await page.getAttribute('a.primary', 'href')).toBe('/rpc/explorer');
      expect(await page.$eval('header.site', (e) => getComputedStyle(e).borderBottomStyle)).toBe('solid'); // demo.css applied
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await shot(page, path === '/' ? 'home' : 'client');
      await page.click('a.primary');
      await page.waitForFunction(() => document.body.dataset.ready === 'true');
      await page.close();
    }
    });
  });

  afterEach(() => {
    expect(pageErrors).toEqual([]);
    expect(requested).not.toContain('/favicon.ico');
  });

  afterAll(() => {
    // Refusals the tests provoke (a forged token, a wrong password) are the only failed responses.
    expect(failedResponses.filter((r) => !['403 /rpc/openrpc.json', '403 /rpc'].includes(r))).toEqual([]);
  });
});
