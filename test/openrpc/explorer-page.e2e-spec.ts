/**
 * The explorer page as the module serves it (`explorer: { enabled: true }`: GET /rpc/explorer and
 * its assets from libs/server/dist/explorer, the document from GET /rpc/openrpc.json) in headless
 * Chromium, against a real Nest app: it lists methods by tag, calls, validates per field (in the page and from the
 * server), sends a notification and a batch, passes typed headers, streams rows with Stop, runs
 * a durable stream (progress bar, detach, re-attach from the last event, cancel), and renders
 * hostile text as text. It also takes the screenshot docs/explorer.png (UPDATE_SCREENSHOTS=1 writes it there).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { abortedChats, HOSTILE_TEXT, receivedNotifications, startDescribeApp } from './support/describe-app.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ASSETS = join(ROOT, 'libs/server/dist/explorer');
/** docs/explorer.png is rewritten only on request (UPDATE_SCREENSHOTS=1): a normal run leaves the tree clean. */
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs/explorer.png') : join(tmpdir(), `nest-jsonrpc-explorer-${process.pid}.png`);

async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeWithChromium('the explorer page test')('explorer page in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const offOrigin: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ASSETS, 'explorer.js'))) throw new Error(`${ASSETS} is missing: run npm run build first`);
    t = await startDescribeApp();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()));
    page.on('request', (r) => !r.url().startsWith(t.url) && offOrigin.push(r.url()));
    await page.goto(`${t.url}/rpc/explorer`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => {
    expect(pageErrors.filter((e) => !e.includes('status of 4'))).toEqual([]);
    expect(offOrigin).toEqual([]);
  });

  const open = async (method: string) => {
    await page.click(`[data-method="${method}"]`);
    await page.waitForFunction((name) => document.getElementById('method-name')?.firstChild?.textContent === name, method);
  };
  const text = async (selector: string) => (await page.textContent(selector)) ?? '';

  it('is served by the module: the page, its two assets with their types and CSP, nothing else', async () => {
    const page = await fetch(`${t.url}/rpc/explorer`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<meta name="openrpc-document" content="/rpc/openrpc.json" />');
    expect(html).toContain('src="/rpc/explorer/explorer.js"');
    expect(html).not.toMatch(/https?:\/\//);
    for (const [asset, type] of [['explorer.js', 'text/javascript; charset=utf-8'], ['explorer.css', 'text/css; charset=utf-8']]) {
      const res = await fetch(`${t.url}/rpc/explorer/${asset}`);
      expect([res.status, res.headers.get('content-type'), res.headers.get('x-content-type-options')]).toEqual([200, type, 'nosniff']);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(ASSETS, asset)))).toBe(true);
    }
    expect((await fetch(`${t.url}/rpc/explorer/index.html`)).status).toBe(404);
    expect((await fetch(`${t.url}/rpc/explorer/../../package.json`)).status).toBe(404);
  });

  it('lists the methods by tag', async () => {
    const groups = await page.$$eval('nav section', (sections) =>
      sections.map((s) => [s.getAttribute('data-tag'), Array.from(s.querySelectorAll('[data-method]')).map((a) => a.getAttribute('data-method'))]),
    );
    expect(groups).toEqual([
      ['math', ['math.add', 'math.subtract']],
      ['users', ['user.create']],
      ['notes', ['notes.echo', 'log.event']],
      ['admin', ['admin.stats']],
      ['streams', ['chat.stream', 'report.generate']],
    ]);
    expect(await page.title()).toBe('Describe test API · JSON-RPC explorer');
  });

  it('calls a method and shows status, headers, timing and both envelopes', async () => {
    await open('math.add');
    await page.fill('#param-a', '2');
    await page.fill('#param-b', '3');
    await page.click('#call');
    await page.waitForSelector('#status');
    expect(await text('#status')).toMatch(/^HTTP 200 OK · \d+ ms$/);
    expect(JSON.parse(await text('#request'))).toEqual({ jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: expect.any(Number) });
    expect(JSON.parse(await text('#response'))).toMatchObject({ jsonrpc: '2.0', result: { sum: 5 } });
    expect(await text('#response-headers')).toContain('content-typeapplication/json');
    expect(await text('#result-schema')).toContain('"sum"');
  });

  it('shows validation errors per field: from the schema before sending, and from the server', async () => {
    await open('user.create');
    await page.fill('#param-name', 'A');
    await page.fill('#param-email', 'not-an-email');
    await page.fill('#param-age', '5');
    await page.fill('#param-address', '{"city": "L"}');
    await page.click('#call');
    const fieldError = (field: string) => text(`[data-field="${field}"] .field-error`);
    expect(await fieldError('name')).toBe('must NOT have fewer than 2 characters');
    expect(await fieldError('email')).toBe('must match format "email"');
    expect(await fieldError('age')).toBe('must be >= 13');
    expect(await fieldError('role')).toBe('is required');
    expect(await fieldError('address')).toBe('city: must NOT have fewer than 2 characters');
    expect(await page.$('#status')).toBeNull(); // nothing was sent

    await page.uncheck('#validate-first');
    await page.click('#call');
    await page.waitForSelector('#server-violations');
    const violations = await page.$$eval('#server-violations li', (items) => items.map((li) => li.getAttribute('data-path')));
    expect(new Set(violations)).toEqual(new Set(['name', 'email', 'age', 'role', 'address.city']));
    expect(JSON.parse(await text('#response')).error.code).toBe(-32602);

    await page.check('#validate-first');
    await page.fill('#param-name', 'Ada');
    await page.fill('#param-email', 'ada@example.com');
    await page.fill('#param-age', '36');
    await page.selectOption('#param-role', { label: '"editor"' });
    await page.fill('#param-address', '{"city": "London"}');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toEqual({ id: expect.any(String), name: 'Ada', email: 'ada@example.com' });
    expect(await text('[data-field="name"] .field-error')).toBe('');
  });

  it('edits params as JSON, validated against the schema with paths', async () => {
    await open('math.add');
    await page.fill('#param-a', '7');
    await page.click('#params-mode');
    expect(JSON.parse(await page.inputValue('#params-json'))).toEqual({ a: 7 });
    await page.fill('#params-json', '{"a": "x", "c": 1}');
    await page.click('#call');
    const errors = await page.$$eval('#params-errors li', (items) => items.map((li) => li.textContent));
    expect(errors.sort()).toEqual(['a: must be number', 'b: is required', 'c: is not a known parameter']);
    await page.fill('#params-json', '{"a": 1');
    await page.click('#call');
    expect(await text('#params-errors')).toMatch(/^Params are not JSON: /);
    await page.fill('#params-json', '{"a": 1, "b": 41}');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"sum": 42'));
    expect(await text('#params-errors')).toBe('');
  });

  it('sends a notification (204, no body) and a batch of a call and a notification', async () => {
    await open('log.event');
    await page.fill('#param-message', 'from the explorer');
    await page.click('#notify');
    await page.waitForSelector('#status');
    expect(await text('#status')).toMatch(/^HTTP 204 No Content · \d+ ms$/);
    expect(await text('#response')).toBe('(empty body)');
    expect(receivedNotifications).toContain('from the explorer');

    await page.fill('#param-message', 'batched');
    await page.click('#batch-add-notification');
    await open('math.subtract');
    await page.fill('#param-minuend', '42');
    await page.fill('#param-subtrahend', '23');
    await page.click('#batch-add');
    expect(await text('#batch-send')).toBe('Send batch (2)');
    await page.click('#batch-send');
    await page.waitForSelector('#batch-response');
    expect(JSON.parse(await text('#batch-request'))).toEqual([
      { jsonrpc: '2.0', method: 'log.event', params: { message: 'batched' } },
      { jsonrpc: '2.0', method: 'math.subtract', params: { minuend: 42, subtrahend: 23 }, id: 2 },
    ]);
    expect(JSON.parse(await text('#batch-response'))).toEqual([{ jsonrpc: '2.0', result: 19, id: 2 }]);
    expect(receivedNotifications).toContain('batched');
  });

  it('passes the headers the user types', async () => {
    await open('admin.stats');
    await page.click('#call');
    await page.waitForSelector('#status');
    expect(JSON.parse(await text('#response')).error.code).toBe(-32001);
    await page.fill('#headers', 'Authorization: Bearer admin');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toEqual({ users: 42 });
    await page.fill('#headers', 'no colon here');
    await page.click('#call');
    expect(await text('#header-errors')).toBe('line 1: expected "Name: value"');
    await page.fill('#headers', '');
  });

  it('reloads the description with the typed headers: methods the credentials open appear', async () => {
    expect(await page.$('[data-method="admin.reset"]')).toBeNull();
    await page.fill('#headers', 'Authorization: Bearer admin');
    await page.click('#reload-document');
    await page.waitForSelector('[data-method="admin.reset"]');
    expect(await page.inputValue('#headers')).toBe('Authorization: Bearer admin');
    await open('admin.reset');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toBe(true);
    await page.fill('#headers', '');
    await page.click('#reload-document');
    await page.waitForFunction(() => document.body.dataset.reloaded === '2');
    expect(await page.$('[data-method="admin.reset"]')).toBeNull();
  });

  it('renders descriptions and results containing HTML as text', async () => {
    await open('notes.echo');
    expect(await text('#method-description')).toBe(`Answers ${HOSTILE_TEXT} too.`);
    await page.fill('#param-text', '<script>window.__xss=2</script><i>x</i>');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toEqual({ text: '<script>window.__xss=2</script><i>x</i>', html: HOSTILE_TEXT });
    expect(await page.$$('main img, main b, main i, main script')).toHaveLength(0);
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
  });

  it('streams rows as they arrive, and Stop aborts the request', async () => {
    await open('chat.stream');
    expect(await text('#stream-info')).toBe('Stream: ndjson on /rpc/stream');
    await page.fill('#param-prompt', 'one two three');
    await page.fill('#param-delayMs', '60');
    await page.click('#stream-start');
    await page.waitForFunction(() => document.getElementById('stream-state')?.textContent?.startsWith('Ended'));
    expect(await text('#stream-state')).toBe('Ended (eof) after 3 rows');
    const rows = await page.$$eval('#rows li code', (items) => items.map((i) => JSON.parse(i.textContent!)));
    expect(rows).toEqual([{ index: 0, delta: 'one' }, { index: 1, delta: 'two' }, { index: 2, delta: 'three' }]);
    await page.screenshot({ path: SCREENSHOT });
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString()).toBe('PNG');
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);

    const prompt = 'a b c d e f g h i j k l';
    await page.fill('#param-prompt', prompt);
    await page.fill('#param-delayMs', '150');
    await page.click('#stream-start');
    await page.waitForFunction(() => document.querySelectorAll('#rows li').length >= 2);
    await page.click('#stream-stop');
    await waitUntil(() => abortedChats.includes(prompt), 'the server to see the client leave');
    await page.waitForFunction(() => document.getElementById('stream-state')?.textContent?.startsWith('Stopped'));
    const count = await page.$$eval('#rows li', (items) => items.length);
    expect(count).toBeGreaterThanOrEqual(2);
    expect(count).toBeLessThan(12);
    expect(await text('#stream-state')).toBe(`Stopped after ${count} rows`);
  });

  it('runs a durable stream: progress bar, detach, re-attach from the last event, cancel', async () => {
    await open('report.generate');
    await page.fill('#param-steps', '40');
    await page.fill('#param-delayMs', '120');
    await page.click('#durable-start');
    await page.waitForFunction(() => Number((document.getElementById('progress') as HTMLProgressElement).value) >= 10, undefined, { timeout: 8000 }).catch(async (e) => {
      throw new Error(`${e}\n${await text('#durable-state')}\n${await text('#events')}\n${await text('#output')}`);
    });
    const streamId = await text('#stream-id');
    expect(streamId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(await text('#response')).result).toEqual({ stream_id: streamId, sse_url: `/rpc/streams/${streamId}`, status: 'running' });

    await page.click('#detach');
    const seen = await page.$$eval('#events li', (items) => items.length);
    expect(await text('#durable-state')).toBe(`Detached after event ${seen} (the stream keeps running)`);
    // The stream runs on without us: wait until the server stored three more events.
    const stored = async () => ((await (await fetch(`${t.url}/rpc/streams/${streamId}/events?after=0&limit=1000`)).json()) as { events: unknown[] }).events.length;
    const deadline = Date.now() + 10_000;
    while ((await stored()) < seen + 3) {
      if (Date.now() > deadline) throw new Error('the stream did not run on while detached');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await page.$$eval('#events li', (items) => items.length)).toBe(seen);

    await page.click('#reattach');
    await page.waitForFunction((n) => document.querySelectorAll('#events li').length >= n + 4, seen, { timeout: 8000 }).catch(async (e) => {
      throw new Error(`${e}\n${await text('#durable-state')}\n${await text('#events')}`);
    });
    expect(await text('#durable-state')).toBe(`Re-attached after event ${seen}`);
    const ids = await page.$$eval('#events li .event-name', (items) => items.map((i) => Number(/#(\d+)/.exec(i.textContent!)![1])));
    expect(ids).toEqual(ids.map((_, i) => i + 1)); // resumed after the last event: no gap, no duplicate

    await page.click('#cancel');
    await page.waitForFunction(() => document.getElementById('durable-state')?.textContent === 'Cancelled', undefined, { timeout: 8000 }).catch(async (e) => {
      throw new Error(`${e}\n${await text('#durable-state')}\n${await text('#events')}\n${await text('#output')}`);
    });
    const last = await page.$$eval('#events li', (items) => items.at(-1)!.getAttribute('data-event'));
    expect(last).toBe('cancelled');
    expect(JSON.parse(await text('#cancel-answer'))).toEqual({ stream_id: streamId, status: 'cancelled' });
    expect(Number(await page.$eval('#progress', (p) => (p as HTMLProgressElement).value))).toBeLessThan(100);
    expect(await page.isDisabled('#reattach')).toBe(true);
  }, 30_000);
});
