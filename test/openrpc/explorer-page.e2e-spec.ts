/**
 * The explorer page as the module serves it (`explorer: { enabled: true }`: GET /rpc/explorer and
 * its assets from libs/server/dist/explorer, the document from GET /rpc/openrpc.json) in headless
 * Chromium, against a real Nest app: methods by tag, Markdown descriptions, sub-forms for nested
 * objects and arrays, validation per field (in the page and from the server), outcomes that never
 * show a stale result, copy buttons and highlighting, notifications and batches in the main pane,
 * typed headers and reloading the description, deep links with back/forward, streamed rows as
 * text/table/raw with Stop, a durable stream (labelled progress, detach, re-attach, cancel), and
 * hostile text rendered as text. The walkthrough against the demo (sign-in, widths, curl) is
 * explorer-demo.e2e-spec.ts. Takes the screenshot docs/explorer.png (UPDATE_SCREENSHOTS=1 writes
 * it there from the Fastify project; otherwise it goes to test-results/explorer/<platform>/).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { TEST_PLATFORM, type TestApp } from '../support/rpc-test-app.js';
import { abortedChats, HOSTILE_TEXT, receivedNotifications, startDescribeApp } from './support/describe-app.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const ASSETS = join(ROOT, 'libs/server/dist/explorer');
/**
 * Screenshots are test artefacts (gitignored), one folder per platform: the two jest projects run
 * this file at once, and a shared file was read by one while the other rewrote it (size 0).
 * docs/explorer.png is rewritten only on request, and only by the Fastify project.
 */
const ARTEFACTS = join(ROOT, 'test-results/explorer', TEST_PLATFORM);
const SCREENSHOT =
  process.env.UPDATE_SCREENSHOTS === '1' && TEST_PLATFORM === 'fastify' ? join(ROOT, 'docs/explorer.png') : join(ARTEFACTS, 'describe-app-stream.png');

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
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const offOrigin: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ASSETS, 'explorer.js'))) throw new Error(`${ASSETS} is missing: run npm run build first`);
    mkdirSync(ARTEFACTS, { recursive: true });
    t = await startDescribeApp();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, permissions: ['clipboard-read', 'clipboard-write'] });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()));
    page.on('request', (r) => (r.url().startsWith(t.url) ? requested.push(new URL(r.url()).pathname) : offOrigin.push(r.url())));
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
  const outcome = () => page.getAttribute('#output', 'data-outcome');
  /** The last attempt has its outcome: `#status` shows "Sending…" first, then the answer replaces it. */
  const answered = () =>
    page.waitForFunction(() => {
      const kind = document.getElementById('output')?.dataset.outcome;
      return kind !== undefined && kind !== 'pending';
    });
  /**
   * Presses a copy button and reads the clipboard once the page says the copy finished: the
   * write is asynchronous, and `data-copied` is set on `marker` (the button itself, or the panel a
   * "Copy as …" button fills) when it has settled. The marker is cleared first, so an earlier
   * copy's does not count.
   */
  const copied = async (button: string, marker = button) => {
    await page.$eval(marker, (element) => delete (element as HTMLElement).dataset.copied);
    await page.click(button);
    await page.waitForSelector(`${marker}[data-copied="true"]`);
    return page.evaluate(() => navigator.clipboard.readText());
  };
  const showHeaders = async () => {
    if (await page.isHidden('#headers-panel')) await page.click('#headers-toggle');
  };

  it('is served by the module: the page, its two assets with their types and CSP, an inline icon, nothing else', async () => {
    const res = await fetch(`${t.url}/rpc/explorer`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('<meta name="openrpc-document" content="/rpc/openrpc.json" />');
    expect(html).toContain('src="/rpc/explorer/explorer.js"');
    expect(html).toMatch(/<link rel="icon" type="image\/svg\+xml" href="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+" \/>/);
    expect(html).not.toMatch(/https?:\/\//);
    for (const [asset, type] of [['explorer.js', 'text/javascript; charset=utf-8'], ['explorer.css', 'text/css; charset=utf-8']]) {
      const asset$ = await fetch(`${t.url}/rpc/explorer/${asset}`);
      expect([asset$.status, asset$.headers.get('content-type'), asset$.headers.get('x-content-type-options')]).toEqual([200, type, 'nosniff']);
      expect(Buffer.from(await asset$.arrayBuffer()).equals(readFileSync(join(ASSETS, asset)))).toBe(true);
    }
    // Self-contained and small: everything the page loads, gzipped, under 100 KB (docs/openrpc.md).
    const gzipped = ['index.html', 'explorer.js', 'explorer.css'].reduce((sum, f) => sum + gzipSync(readFileSync(join(ASSETS, f)), { level: 9 }).length, 0);
    expect(gzipped).toBeLessThan(100_000);
    expect((await fetch(`${t.url}/rpc/explorer/index.html`)).status).toBe(404);
    expect((await fetch(`${t.url}/rpc/explorer/../../package.json`)).status).toBe(404);
    // The browser took the inline icon: it never asked for /favicon.ico.
    expect(requested).not.toContain('/favicon.ico');
  });

  it('lists the methods by tag; a method without params shows no editor', async () => {
    const groups = await page.$$eval('nav section', (sections) =>
      sections.map((s) => [s.getAttribute('data-tag'), Array.from(s.querySelectorAll('[data-method]')).map((a) => a.getAttribute('data-method'))]),
    );
    expect(groups).toEqual([
      ['math', ['math.add', 'math.subtract']],
      ['users', ['user.create']],
      ['notes', ['notes.echo', 'log.event']],
      ['admin', ['admin.stats']],
      ['streams', ['chat.stream', 'report.generate']],
      ['system', ['system.time']],
    ]);
    expect(await page.title()).toBe('Describe test API · JSON-RPC explorer');
    await open('system.time');
    expect(await text('#no-params')).toBe('Takes no params.');
    expect(await page.$$('main textarea, main input:not([type=checkbox])')).toHaveLength(0);
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'ok');
    expect(JSON.parse(await text('#request'))).toEqual({ jsonrpc: '2.0', method: 'system.time', id: 1 });
  });

  it('renders Markdown descriptions: code, emphasis, lists, safe links only', async () => {
    await open('math.add');
    const description = await page.$eval('#method-description', (d) => ({
      code: Array.from(d.querySelectorAll('code')).map((c) => c.textContent),
      strong: d.querySelector('strong')?.textContent,
      items: Array.from(d.querySelectorAll('li')).map((li) => li.textContent),
      em: d.querySelector('li em')?.textContent,
      links: Array.from(d.querySelectorAll('a')).map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('rel')]),
      text: d.textContent,
    }));
    expect(description).toEqual({
      code: ['a', 'b'],
      strong: 'Both',
      items: ['integers', 'or decimals'],
      em: 'decimals',
      links: [['the docs', 'https://example.com/docs', 'noopener noreferrer']],
      text: 'Adds a and b. Both are numbers:integersor decimalsSee the docs or this.',
    });
  });

  it('calls a method: status, timing, collapsed response headers, highlighted envelopes with copy buttons', async () => {
    await open('math.add');
    await page.fill('#param-a', '2');
    await page.fill('#param-b', '3');
    await page.click('#call');
    await answered();
    expect(await text('#status')).toMatch(/^HTTP 200 OK · \d+ ms$/);
    expect(await outcome()).toBe('ok');
    expect(JSON.parse(await text('#request'))).toEqual({ jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 1 });
    expect(JSON.parse(await text('#response'))).toMatchObject({ jsonrpc: '2.0', result: { sum: 5 } });
    expect(await text('#response-headers')).toContain('content-typeapplication/json');
    expect(await page.$eval('details.response-headers', (d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await page.isVisible('#response-headers')).toBe(false);
    expect(await page.$$eval('#response .j-key', (keys) => keys.map((k) => k.textContent))).toEqual(['"jsonrpc"', '"result"', '"sum"', '"id"']);
    expect(await page.$$eval('#response .j-num', (n) => n.map((k) => k.textContent))).toEqual(['5', '1']);
    expect(await text('#result-schema')).toContain('"sum"');

    expect(await copied('#response-copy')).toBe(await text('#response'));
    expect(JSON.parse(await copied('#request-copy'))).toEqual({ jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 1 });
  });

  it('validates per field, nested fields included; a blocked attempt replaces the previous success; server violations too', async () => {
    await open('user.create');
    expect(await page.$eval('[id="param-address"]', (e) => e.tagName)).toBe('FIELDSET');
    await page.fill('#param-name', 'Ada');
    await page.fill('#param-email', 'ada@example.com');
    await page.fill('#param-age', '36');
    await page.selectOption('#param-role', { label: '"editor"' });
    await page.fill('[id="param-address.city"]', 'London');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'ok');

    // Now a broken attempt: nothing is sent and the earlier success is gone from the screen.
    await page.fill('#param-name', 'A');
    await page.fill('#param-email', 'not-an-email');
    await page.fill('#param-age', '5');
    await page.selectOption('#param-role', { index: 0 });
    await page.fill('[id="param-address.city"]', 'L');
    await page.fill('[id="param-address.zip"]', '123');
    await page.click('#call');
    const fieldError = (field: string) => text(`[data-field="${field}"] .field-error`);
    expect(await fieldError('name')).toBe('must NOT have fewer than 2 characters');
    expect(await fieldError('email')).toBe('must match format "email"');
    expect(await fieldError('age')).toBe('must be >= 13');
    expect(await fieldError('role')).toBe('is required');
    expect(await fieldError('address.city')).toBe('must NOT have fewer than 2 characters');
    expect(await fieldError('address.zip')).toBe('must match pattern "^[0-9]{5}$"');
    expect(await outcome()).toBe('validation');
    expect(await text('#status')).toBe('6 problems with the params, shown at the fields; nothing was sent');
    expect(await page.$('#response')).toBeNull();

    await page.uncheck('#validate-first');
    await page.click('#call');
    await page.waitForSelector('#server-violations');
    expect(await outcome()).toBe('server');
    expect(await text('#error-summary')).toBe('Error -32602 Invalid params');
    const violations = await page.$$eval('#server-violations li', (items) => items.map((li) => li.getAttribute('data-path')));
    expect(new Set(violations)).toEqual(new Set(['name', 'email', 'age', 'role', 'address.city', 'address.zip']));
    expect(JSON.parse(await text('#response')).error.code).toBe(-32602);
    expect(await fieldError('address.city')).not.toBe(''); // shown at the field too

    await page.check('#validate-first');
    await page.fill('#param-name', 'Ada');
    await page.fill('#param-email', 'ada@example.com');
    await page.fill('#param-age', '36');
    await page.selectOption('#param-role', { label: '"editor"' });
    await page.fill('[id="param-address.city"]', 'London');
    await page.fill('[id="param-address.zip"]', '');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toEqual({ id: expect.any(String), name: 'Ada', email: 'ada@example.com' });
    expect(await fieldError('name')).toBe('');
  });

  it('edits arrays as rows with add/remove, and any group as JSON one click away', async () => {
    await open('user.create');
    await page.click('[id="param-tags-add"]');
    await page.click('[id="param-tags-add"]');
    await page.click('[id="param-tags-add"]');
    await page.fill('[id="param-tags.0"]', 'first');
    await page.fill('[id="param-tags.1"]', 'second');
    await page.fill('[id="param-tags.2"]', 'third');
    await page.click('[data-remove="tags.0"]');
    expect(await page.$$eval('[data-field="tags"] .array-row', (rows) => rows.length)).toBe(2);
    expect([await page.inputValue('[id="param-tags.0"]'), await page.inputValue('[id="param-tags.1"]')]).toEqual(['second', 'third']);

    await page.click('[id="param-address-mode"]');
    expect(JSON.parse(await page.inputValue('[id="param-address-json"]'))).toEqual({ city: 'London' });
    await page.fill('[id="param-address-json"]', '{"city": "Paris", "zip": "75001"}');
    await page.click('[id="param-address-mode"]');
    expect(await page.inputValue('[id="param-address.city"]')).toBe('Paris');
    expect(await page.inputValue('[id="param-address.zip"]')).toBe('75001');

    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'ok');
    expect(JSON.parse(await text('#request')).params).toEqual({ name: 'Ada', email: 'ada@example.com', age: 36, role: 'editor', address: { city: 'Paris', zip: '75001' }, tags: ['second', 'third'] });
  });

  it('edits params as JSON, validated against the schema with paths', async () => {
    await open('math.add');
    await page.fill('#param-a', '7');
    await page.fill('#param-b', '');
    await page.click('#params-mode');
    expect(JSON.parse(await page.inputValue('#params-json'))).toEqual({ a: 7 });
    await page.fill('#params-json', '{"a": "x", "c": 1}');
    await page.click('#call');
    const errors = await page.$$eval('#params-errors li', (items) => items.map((li) => li.textContent));
    expect(errors.sort()).toEqual(['a: must be number', 'b: is required', 'c: is not a known parameter']);
    await page.fill('#params-json', '{"a": 1');
    await page.click('#call');
    expect(await text('#params-errors')).toMatch(/^Params are not JSON: /);
    expect(await outcome()).toBe('validation');
    await page.fill('#params-json', '{"a": 1, "b": 41}');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"sum": 42'));
    expect(await text('#params-errors')).toBe('');
    await page.click('#params-mode');
    expect([await page.inputValue('#param-a'), await page.inputValue('#param-b')]).toEqual(['1', '41']);
  });

  it('sends a notification (204, no body) and a batch, composed from methods and shown in the main pane', async () => {
    await open('log.event');
    await page.fill('#param-message', 'from the explorer');
    await page.click('#notify');
    await answered();
    expect(await text('#status')).toMatch(/^HTTP 204 No Content · \d+ ms$/);
    expect(await text('#response')).toBe('(empty body)');
    expect(receivedNotifications).toContain('from the explorer');

    await page.fill('#param-message', 'batched');
    await page.click('#batch-add-notification');
    expect(await text('#open-batch')).toBe('Batch (1)');
    await open('math.subtract');
    await page.fill('#param-minuend', '42');
    await page.fill('#param-subtrahend', '23');
    await page.click('#batch-add');
    expect(await text('#batch-note')).toBe('Added to the batch (2 entries). Open the batch');
    await open('user.create');
    await page.fill('#param-name', 'X');
    await page.click('#batch-add');
    expect(await outcome()).toBe('validation');
    expect(await text('#open-batch')).toBe('Batch (2)'); // not added
    await page.click('#open-batch');
    await page.waitForSelector('#batch-send');
    expect(new URL(page.url()).hash).toBe('#!batch');
    expect(await text('#batch-send')).toBe('Send batch (2)');
    await page.click('#batch-send');
    await page.waitForSelector('#batch-response');
    expect(JSON.parse(await text('#batch-request'))).toEqual([
      { jsonrpc: '2.0', method: 'log.event', params: { message: 'batched' } },
      { jsonrpc: '2.0', method: 'math.subtract', params: { minuend: 42, subtrahend: 23 }, id: 2 },
    ]);
    expect(JSON.parse(await text('#batch-response'))).toEqual([{ jsonrpc: '2.0', result: 19, id: 2 }]);
    expect(await page.$$eval('#batch-results li', (items) => items.map((li) => li.textContent))).toEqual(['log.event → notification: no answer', 'math.subtract → 19']);
    expect(receivedNotifications).toContain('batched');
    // The main pane, not a sidebar: the answer has the page's width.
    const box = await page.locator('#batch-response').boundingBox();
    expect(box!.x).toBeGreaterThan(280);
    expect(box!.width).toBeGreaterThan(600);
    await page.click('[aria-label="Remove log.event"]');
    expect(await text('#batch-send')).toBe('Send batch (1)');
    await page.click('#batch-clear');
    expect(await page.isDisabled('#batch-send')).toBe(true);
  });

  it('passes the headers the user types; a malformed line stops the attempt and says so', async () => {
    await open('admin.stats');
    await page.click('#call');
    await answered();
    expect(JSON.parse(await text('#response')).error.code).toBe(-32001);
    expect(await outcome()).toBe('server');
    await showHeaders();
    await page.fill('#headers', 'Authorization: Bearer admin');
    expect(await text('#headers-toggle')).toBe('Headers (1)');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toEqual({ users: 42 });
    await page.fill('#headers', 'no colon here');
    await page.click('#call');
    expect(await text('#header-errors')).toBe('line 1: expected "Name: value"');
    expect(await outcome()).toBe('validation');
    expect(await page.$('#response')).toBeNull();
    await page.fill('#headers', '');
  });

  it('reloads the description with the typed headers, keeping the selected method; a refusal shows the server\'s reason', async () => {
    await open('math.add');
    await page.fill('#param-a', '5');
    expect(await page.$('[data-method="admin.reset"]')).toBeNull();
    await showHeaders();
    await page.fill('#headers', 'Authorization: Bearer admin');
    await page.click('#reload-document');
    await page.waitForSelector('[data-method="admin.reset"]');
    expect(await page.inputValue('#headers')).toBe('Authorization: Bearer admin');
    expect(await text('#method-name')).toBe('math.add'); // still selected
    expect(await page.inputValue('#param-a')).toBe('5'); // and what was typed is still there
    await open('admin.reset');
    await page.click('#call');
    await page.waitForFunction(() => document.getElementById('response')?.textContent?.includes('"result"'));
    expect(JSON.parse(await text('#response')).result).toBe(true);

    await page.fill('#headers', 'Authorization: Bearer refused');
    await page.click('#reload-document');
    await page.waitForFunction(() => document.body.dataset.reloadFailed === '1');
    expect(await text('#document-error')).toContain('The OpenRPC document answered HTTP 403 Forbidden (-32001 Refused by the describe app)');
    expect(JSON.parse(await text('#document-error-body'))).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Refused by the describe app' }, id: null });
    expect(await page.$('[data-method="admin.reset"]')).not.toBeNull(); // the previous description stays

    await page.fill('#headers', '');
    await page.click('#reload-document');
    await page.waitForFunction(() => document.body.dataset.reloaded === '2');
    expect(await page.$('[data-method="admin.reset"]')).toBeNull();
    expect(await text('#not-found')).toContain('"admin.reset" is not in the description this caller sees.');
    expect(await text('#document-error')).toBe('');
  });

  it('follows deep links on load and on back/forward', async () => {
    const other = await context.newPage();
    try {
      await other.goto(`${t.url}/rpc/explorer#user.create`);
      await other.waitForFunction(() => document.body.dataset.ready === 'true');
      expect(await other.textContent('#method-name')).toBe('user.create');
      expect(await other.getAttribute('[data-method="user.create"]', 'aria-current')).toBe('page');
      await other.click('[data-method="math.subtract"]');
      await other.waitForFunction(() => document.getElementById('method-name')?.textContent === 'math.subtract');
      expect(new URL(other.url()).hash).toBe('#math.subtract');
      await other.goBack();
      await other.waitForFunction(() => document.getElementById('method-name')?.textContent === 'user.create');
      await other.goForward();
      await other.waitForFunction(() => document.getElementById('method-name')?.textContent === 'math.subtract');
      await other.goto(`${t.url}/rpc/explorer#no.such.method`);
      await other.waitForFunction(() => document.getElementById('not-found') !== null);
      expect(await other.textContent('#not-found h2')).toBe('no.such.method');
    } finally {
      await other.close();
    }
  });

  it('copies a call as curl that a shell runs verbatim, whatever the params hold', async () => {
    await open('notes.echo');
    const hostile = `it's "$(touch /tmp/pwned-explorer)" \`id\` \\n ; done`;
    await page.fill('#param-text', hostile);
    const pasted = await copied('#copy-curl', 'section.code-panel:has(#copy-curl) .code-shown');
    const curl = await text('#code-snippet');
    expect(pasted).toBe(curl);
    const { stdout } = await run('sh', ['-c', curl], { timeout: 10_000 });
    expect(JSON.parse(stdout).result.text).toBe(hostile);
    expect(existsSync('/tmp/pwned-explorer')).toBe(false);
  });

  it('tells a network failure from a server error, and follows the system dark theme', async () => {
    await open('math.add');
    await page.fill('#param-a', '1');
    await page.fill('#param-b', '2');
    await page.route('**/rpc', (route) => route.abort('connectionrefused'));
    try {
      await page.click('#call');
      await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'network');
      expect(await text('#status')).toMatch(/^Request failed: /);
      expect(await text('.outcome-kind')).toBe('Network error');
    } finally {
      await page.unroute('**/rpc');
    }
    // Chromium logs the refused connection this test provoked: the only expected console error.
    const refused = pageErrors.findIndex((e) => e.includes('ERR_CONNECTION_REFUSED'));
    expect(refused).toBeGreaterThanOrEqual(0);
    pageErrors.splice(refused, 1);
    const colours = async () => page.evaluate(() => [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.querySelector('.output')!).borderLeftColor]);
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await colours();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await colours();
    await page.emulateMedia({ colorScheme: 'light' });
    expect(light[0]).toBe('rgb(255, 255, 255)');
    expect(dark[0]).toBe('rgb(13, 17, 23)');
    expect(dark[1]).not.toBe(light[1]);
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

  it('streams rows as they arrive (joined text, table, raw rows), and Stop aborts the request', async () => {
    await open('chat.stream');
    expect(await text('#stream-info')).toBe('Stream: ndjson on /rpc/stream');
    await page.fill('#param-prompt', 'one two three');
    await page.fill('#param-delayMs', '60');
    await page.click('#stream-start');
    await page.waitForFunction(() => document.getElementById('stream-state')?.textContent?.startsWith('Ended'));
    expect(await text('#stream-state')).toBe('Ended (eof) after 3 rows');
    expect(await page.isVisible('#stream-text')).toBe(true); // rows carry `delta`: the text view first
    expect(await text('#stream-text')).toBe('one two three');
    const rows = await page.$$eval('#rows li code', (items) => items.map((i) => JSON.parse(i.textContent!)));
    expect(rows).toEqual([{ index: 0, delta: 'one' }, { index: 1, delta: ' two' }, { index: 2, delta: ' three' }]);
    await page.click('#rows-view-table');
    expect(await page.$$eval('#rows-table tr', (trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent)))).toEqual([
      ['#', 'index', 'delta'],
      ['1', '0', 'one'],
      ['2', '1', ' two'],
      ['3', '2', ' three'],
    ]);
    await page.click('#rows-view-raw');
    expect(await page.isVisible('#rows')).toBe(true);
    await page.click('#rows-view-text');
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

    // A refused stream (invalid params with the page's check off) is a server error, not a stale success.
    await page.uncheck('#validate-first');
    await page.fill('#param-prompt', '');
    await page.click('#stream-start');
    await page.waitForFunction(() => document.getElementById('output')?.dataset.outcome === 'server');
    expect(await text('#status')).toMatch(/^Error: -32602 Invalid params/);
    expect(await page.$$('#rows li')).toHaveLength(0);
    await page.check('#validate-first');
  });

  it('runs a durable stream: labelled progress, detach, re-attach from the last event, cancel', async () => {
    await open('report.generate');
    await page.fill('#param-steps', '40');
    await page.fill('#param-delayMs', '120');
    await page.click('#durable-start');
    await page.waitForFunction(() => Number((document.getElementById('progress') as HTMLProgressElement).value) >= 10, undefined, { timeout: 8000 }).catch(async (e) => {
      throw new Error(`${e}\n${await text('#durable-state')}\n${await text('#events')}\n${await text('#output')}`);
    });
    expect(await text('#progress-label')).toMatch(/^\d+% · collecting$/);
    const streamId = await text('#stream-id');
    expect(streamId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(await text('#response')).result).toEqual({ stream_id: streamId, sse_url: `/rpc/streams/${streamId}`, status: 'running' });

    await page.click('#detach');
    const seen = await page.$$eval('#events li', (items) => items.length);
    expect(await text('#durable-state')).toBe(`Detached after event ${seen} (the stream keeps running)`);
    expect(await text('#last-event-id')).toBe(`· last event ${seen}`);
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

  it('never asked for /favicon.ico', () => {
    expect(requested).not.toContain('/favicon.ico');
  });
});
