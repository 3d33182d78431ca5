import { append, clear, h, pretty } from './dom.js';
import { parseHeaderLines, postJson, renderExchange, renderFailure } from './exchange.js';
import { methodsByTag, resolveSchema, rpcUrlOf, type ExplorerDocument, type ExplorerMethod } from './openrpc-view.js';
import { ParamsForm } from './params-form.js';
import { paramsValidator, type FieldError } from './params-validator.js';
import { durableStreamPanel, liveStreamPanel } from './stream-panels.js';

interface BatchEntry {
  method: string;
  params: unknown;
  notification: boolean;
}

/** Where the document is: `?document=`, else `<meta name="openrpc-document">`, else `openrpc.json` next to the page. */
function documentUrl(): string {
  const fromQuery = new URLSearchParams(location.search).get('document');
  const fromMeta = document.querySelector('meta[name="openrpc-document"]')?.getAttribute('content');
  const url = new URL(fromQuery ?? fromMeta ?? 'openrpc.json', location.href);
  if (url.origin !== location.origin) throw new Error('The explorer reads documents from its own origin only');
  return url.href;
}

class Explorer {
  private readonly headersInput = h('textarea', { id: 'headers', attrs: { rows: '2', spellcheck: 'false', placeholder: 'Authorization: Bearer …', 'aria-label': 'Request headers' } });
  private readonly headerProblems = h('ul', { class: 'errors', id: 'header-errors' });
  private readonly nav = h('nav', { id: 'methods' });
  private readonly main = h('main', { id: 'method' });
  private readonly batch: BatchEntry[] = [];
  private readonly batchList = h('ol', { id: 'batch-list' });
  private readonly batchOutput = h('div', { id: 'batch-output', class: 'exchange' });
  private readonly batchSend = h('button', { id: 'batch-send', attrs: { type: 'button', disabled: '' }, on: { click: () => void this.sendBatch() } }, 'Send batch');
  private readonly rpcUrl: string;

  /** `headerLines`: what the headers box held when the document was (re)loaded with them. */
  constructor(
    private readonly doc: ExplorerDocument,
    headerLines = '',
  ) {
    this.headersInput.value = headerLines;
    this.rpcUrl = rpcUrlOf(doc, location.origin);
    // The document lists what its caller may call: reading it again with the typed headers shows
    // the methods those credentials open.
    const reload = h('button', { id: 'reload-document', attrs: { type: 'button' }, on: { click: () => void this.reload() } }, 'Reload the description with these headers');
    const filter = h('input', { id: 'filter', attrs: { type: 'search', placeholder: 'Filter methods', 'aria-label': 'Filter methods' }, on: { input: () => this.filter(filter.value) } });
    document.body.replaceChildren(
      h(
        'header',
        {},
        h('h1', {}, doc.info.title, ' ', h('span', { class: 'version' }, doc.info.version)),
        doc.info.description ? h('p', { class: 'muted' }, doc.info.description) : null,
        h('p', { class: 'muted' }, 'Endpoint ', h('code', {}, this.rpcUrl), ` · OpenRPC ${doc.openrpc}`),
        h('label', { attrs: { for: 'headers' } }, 'Headers sent with every request (one "Name: value" per line)'),
        this.headersInput,
        this.headerProblems,
        reload,
      ),
      h('div', { class: 'layout' }, h('aside', {}, filter, this.nav, h('section', { class: 'batch' }, h('h3', {}, 'Batch'), this.batchList, this.batchSend, this.batchOutput)), this.main),
    );
    this.renderNav();
    const first = doc.methods[0];
    if (first) this.select(first);
    else this.main.append(h('p', {}, 'No methods are visible to this caller.'));
  }

  private renderNav(): void {
    for (const [tag, methods] of methodsByTag(this.doc.methods)) {
      this.nav.append(
        h(
          'section',
          { attrs: { 'data-tag': tag } },
          h('h2', {}, tag),
          h('ul', {}, ...methods.map((m) => h('li', {}, h('a', { attrs: { href: `#${encodeURIComponent(m.name)}`, 'data-method': m.name }, on: { click: (e) => { e.preventDefault(); this.select(m); } } }, m.name, m.deprecated ? h('span', { class: 'badge' }, 'deprecated') : null, m['x-stream'] ? h('span', { class: 'badge' }, m['x-stream'].durable ? 'durable' : 'stream') : null)))),
        ),
      );
    }
  }

  private async reload(): Promise<void> {
    const headers = this.headers();
    if (headers === undefined) return;
    try {
      const doc = await loadDocument(headers);
      new Explorer(doc, this.headersInput.value);
      document.body.dataset.reloaded = String(Number(document.body.dataset.reloaded ?? '0') + 1);
    } catch (error) {
      this.headerProblems.append(h('li', {}, `Could not reload the API description: ${(error as Error).message}`));
    }
  }

  private filter(text: string): void {
    const needle = text.trim().toLowerCase();
    for (const link of this.nav.querySelectorAll<HTMLElement>('[data-method]')) {
      link.parentElement!.hidden = needle !== '' && !link.dataset.method!.toLowerCase().includes(needle);
    }
  }

  /** The headers to send, or undefined (and the problems shown) when a line is malformed. */
  private headers = (): Headers | undefined => {
    const { headers, problems } = parseHeaderLines(this.headersInput.value);
    clear(this.headerProblems);
    for (const p of problems) this.headerProblems.append(h('li', {}, p));
    return problems.length ? undefined : headers;
  };

  private select(method: ExplorerMethod): void {
    for (const link of this.nav.querySelectorAll('[data-method]')) link.classList.toggle('selected', link.getAttribute('data-method') === method.name);
    const output = h('div', { id: 'output', class: 'exchange' });
    const validate = paramsValidator(method, this.doc);
    const validateBox = h('input', { id: 'validate-first', attrs: { type: 'checkbox', checked: '' } });
    const form: ParamsForm = new ParamsForm(method, this.doc, () => form.clearErrors());
    /** The params to send, or null (errors shown) when they are not valid. */
    const params = (): unknown | null => {
      const { params: value, errors } = form.read();
      const found: FieldError[] = [...errors];
      if (!errors.length && validateBox.checked) found.push(...validate(value ?? {}));
      form.showErrors(found);
      return found.length ? null : value;
    };
    const stream = method['x-stream'];
    const ctx = { rpcUrl: this.rpcUrl, origin: location.origin, headers: this.headers, params, output };
    const actions = stream
      ? stream.durable
        ? durableStreamPanel(method, ctx)
        : liveStreamPanel(method, ctx)
      : h(
          'div',
          { class: 'actions' },
          h('button', { id: 'call', class: 'primary', attrs: { type: 'button' }, on: { click: () => void this.call(method, params, output, false) } }, 'Call'),
          h('button', { id: 'notify', attrs: { type: 'button' }, on: { click: () => void this.call(method, params, output, true) } }, 'Send as notification'),
          h('button', { id: 'batch-add', attrs: { type: 'button' }, on: { click: () => this.addToBatch(method, params, false) } }, 'Add to batch'),
          h('button', { id: 'batch-add-notification', attrs: { type: 'button' }, on: { click: () => this.addToBatch(method, params, true) } }, 'Add to batch as notification'),
        );
    const resultSchema = method.result ? resolveSchema(method.result.schema, this.doc) : {};
    clear(this.main);
    append(
      this.main,
      h('h2', { id: 'method-name' }, method.name, method.deprecated ? h('span', { class: 'badge' }, 'deprecated') : null),
      method.summary ? h('p', { id: 'method-summary', class: 'summary' }, method.summary) : null,
      method.description ? h('p', { id: 'method-description', class: 'description' }, method.description) : null,
      stream ? h('p', { class: 'muted', id: 'stream-info' }, stream.durable ? `Durable stream (started on ${new URL(this.rpcUrl).pathname}, events at ${stream.streamsPath ?? ''}/:id)` : `Stream: ${stream.format} on ${stream.path}`) : null,
      form.element,
      h('label', { class: 'inline' }, validateBox, ' Validate params against the schema before sending'),
      actions,
      output,
      h('details', {}, h('summary', {}, stream ? 'Row schema' : 'Result schema'), h('pre', { id: 'result-schema' }, pretty(resultSchema))),
      method.errors?.length ? h('details', {}, h('summary', {}, 'Errors'), h('ul', { id: 'method-errors' }, ...method.errors.map((e) => h('li', {}, h('code', {}, String(e.code)), ' ', e.message)))) : null,
    );
  }

  private async call(method: ExplorerMethod, params: () => unknown | null, output: HTMLElement, notification: boolean): Promise<void> {
    const headers = this.headers();
    const value = params();
    if (headers === undefined || value === null) return;
    const body = { jsonrpc: '2.0', method: method.name, ...(value === undefined ? {} : { params: value }), ...(notification ? {} : { id: Date.now() % 1_000_000 }) };
    try {
      const exchange = await postJson(this.rpcUrl, body, headers);
      renderExchange(output, exchange);
      const error = (exchange.response as { error?: { code?: number; data?: unknown } } | undefined)?.error;
      if (error?.code === -32602 && Array.isArray(error.data)) showServerViolations(output, error.data);
    } catch (error) {
      renderFailure(output, error);
    }
  }

  private addToBatch(method: ExplorerMethod, params: () => unknown | null, notification: boolean): void {
    const value = params();
    if (value === null) return;
    this.batch.push({ method: method.name, params: value, notification });
    this.renderBatch();
  }

  private renderBatch(): void {
    clear(this.batchList);
    this.batch.forEach((entry, i) =>
      this.batchList.append(
        h('li', {}, h('code', {}, entry.method), entry.notification ? ' (notification)' : '', ' ', h('button', { class: 'link', attrs: { type: 'button', 'aria-label': `Remove ${entry.method}` }, on: { click: () => { this.batch.splice(i, 1); this.renderBatch(); } } }, '×')),
      ),
    );
    this.batchSend.disabled = this.batch.length === 0;
    this.batchSend.textContent = `Send batch (${this.batch.length})`;
  }

  private async sendBatch(): Promise<void> {
    const headers = this.headers();
    if (headers === undefined || this.batch.length === 0) return;
    const body = this.batch.map((e, i) => ({ jsonrpc: '2.0', method: e.method, ...(e.params === undefined ? {} : { params: e.params }), ...(e.notification ? {} : { id: i + 1 }) }));
    try {
      renderExchange(this.batchOutput, await postJson(this.rpcUrl, body, headers), 'batch-');
      this.batch.length = 0;
      this.renderBatch();
    } catch (error) {
      renderFailure(this.batchOutput, error, 'batch-');
    }
  }
}

/** The server's -32602 violations, listed by path (the same shape the form shows). */
function showServerViolations(output: HTMLElement, data: unknown[]): void {
  const items = data.map((v) => {
    const violation = v as { path?: unknown; message?: unknown };
    return h('li', { attrs: { 'data-path': String(violation.path ?? '') } }, `${violation.path ?? '(params)'}: ${String(violation.message ?? '')}`);
  });
  output.append(h('h4', {}, 'Invalid params (from the server)'), h('ul', { id: 'server-violations', class: 'errors' }, ...items));
}

/** The OpenRPC document, asked for with `headers` (it lists what that caller may call). */
async function loadDocument(headers: Headers): Promise<ExplorerDocument> {
  headers.set('accept', 'application/json');
  const res = await fetch(documentUrl(), { headers });
  if (!res.ok) throw new Error(`The OpenRPC document answered HTTP ${res.status}`);
  const doc = (await res.json()) as ExplorerDocument;
  if (!doc || !Array.isArray(doc.methods) || typeof doc.info?.title !== 'string') throw new Error('Not an OpenRPC document');
  return doc;
}

async function boot(): Promise<void> {
  try {
    const doc = await loadDocument(new Headers());
    new Explorer(doc);
    document.title = `${doc.info.title} · JSON-RPC explorer`;
    document.body.dataset.ready = 'true';
  } catch (error) {
    document.body.replaceChildren(h('p', { id: 'boot-error', class: 'bad' }, `Could not load the API description: ${(error as Error).message}`));
    document.body.dataset.ready = 'error';
  }
}

void boot();
