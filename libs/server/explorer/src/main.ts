import { BatchView } from './batch-view.js';
import type { BatchEntry, ExplorerContext, RequestHeaders } from './context.js';
import { button, clear, h } from './dom.js';
import { parseBody, parseHeaderLines } from './exchange.js';
import { markdown } from './markdown.js';
import { MethodView } from './method-view.js';
import { methodsByTag, rpcUrlOf, signInMethodOf, streamsPathOf, type ExplorerDocument, type ExplorerMethod } from './openrpc-view.js';
import type { ParamsDraft } from './params-form.js';
import { loadSession, saveSession, signInHeaderValue, signInLabel, withHeaderLine, type ExplorerSession } from './session.js';
import { StreamsView } from './streams-view.js';

/** Hash routes of the two panels that are not methods (`!` never starts a method name in practice). */
const BATCH_ROUTE = '!batch';
const STREAMS_ROUTE = '!streams';

/** Where the document is: `?document=`, else `<meta name="openrpc-document">`, else `openrpc.json` next to the page. */
function documentUrl(): string {
  const fromQuery = new URLSearchParams(location.search).get('document');
  const fromMeta = document.querySelector('meta[name="openrpc-document"]')?.getAttribute('content');
  const url = new URL(fromQuery ?? fromMeta ?? 'openrpc.json', location.href);
  if (url.origin !== location.origin) throw new Error('The explorer reads documents from its own origin only');
  return url.href;
}

/** The document was refused or unreadable: what the server said, body included. */
class DocumentError extends Error {
  constructor(message: string, readonly body?: string) {
    super(message);
  }
}

/** The OpenRPC document, asked for with `headers` (it lists what that caller may call). */
async function loadDocument(headers: Headers): Promise<ExplorerDocument> {
  const sent = new Headers(headers);
  sent.set('accept', 'application/json');
  const res = await fetch(documentUrl(), { headers: sent });
  const text = await res.text();
  if (!res.ok) {
    const { value, raw } = parseBody(text);
    const error = (value as { error?: { code?: number; message?: string } } | undefined)?.error;
    const reason = error?.message ? ` (${[error.code, error.message].filter((part) => part !== undefined).join(' ')})` : '';
    throw new DocumentError(`The OpenRPC document answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${reason}`, raw ?? (value === undefined ? undefined : JSON.stringify(value, null, 2)));
  }
  const { value: doc } = parseBody(text) as { value?: ExplorerDocument };
  if (!doc || !Array.isArray(doc.methods) || typeof doc.info?.title !== 'string') throw new DocumentError('Not an OpenRPC document', text.slice(0, 2000));
  return doc;
}

interface View {
  readonly element: HTMLElement;
  close(): void;
  draft?(): ParamsDraft | undefined;
}

class Explorer {
  private doc!: ExplorerDocument;
  private ctx!: ExplorerContext;
  private view: View | undefined;
  private viewRoute: string | undefined;
  /** The route last shown, kept across re-renders (`viewRoute` is reset to force one). */
  private shownRoute: string | undefined;
  private readonly drafts = new Map<string, ParamsDraft>();
  private readonly batch: BatchEntry[] = [];
  private session: ExplorerSession;
  private remember: boolean;

  private readonly headersInput = h('textarea', { id: 'headers', attrs: { rows: '3', spellcheck: 'false', autocomplete: 'off', placeholder: 'Authorization: Bearer …', 'aria-describedby': 'header-errors' } });
  private readonly headerProblems = h('ul', { class: 'errors', id: 'header-errors' });
  private readonly rememberBox = h('input', { id: 'remember-headers', attrs: { type: 'checkbox' } });
  private readonly documentError = h('div', { id: 'document-error', class: 'document-error', attrs: { role: 'alert' } });
  private readonly headersPanel: HTMLElement;
  private readonly headersToggle: HTMLButtonElement;
  private readonly menuButton: HTMLButtonElement;
  private readonly title = h('h1', {});
  private readonly info = h('div', { id: 'api-info', class: 'api-info' });
  private readonly nav = h('nav', { id: 'methods', attrs: { 'aria-label': 'Methods' } });
  private readonly filterInput: HTMLInputElement;
  private readonly main = h('main', { id: 'main', attrs: { tabindex: '-1' } });
  private readonly batchLink = h('a', { id: 'open-batch', class: 'top-link', attrs: { href: `#${BATCH_ROUTE}` } });
  private readonly streamsLink = h('a', { id: 'open-streams', class: 'top-link', attrs: { href: `#${STREAMS_ROUTE}` } }, 'Streams');
  private readonly auth = h('div', { id: 'auth', class: 'auth' });

  constructor() {
    const loaded = loadSession();
    this.session = loaded.session;
    this.remember = loaded.remember;
    this.headersInput.value = this.session.headers;
    this.rememberBox.checked = this.remember;
    this.headersInput.addEventListener('input', () => this.headersEdited());
    this.rememberBox.addEventListener('change', () => {
      this.remember = this.rememberBox.checked;
      saveSession(this.session, this.remember);
    });
    this.headersToggle = button('Headers', () => this.showHeaders(this.headersPanel.hidden), { id: 'headers-toggle', attrs: { 'aria-controls': 'headers-panel', 'aria-expanded': 'false' } });
    this.menuButton = button('☰ Methods', () => this.drawer(!document.body.classList.contains('drawer-open')), { id: 'menu', class: 'menu', attrs: { 'aria-controls': 'sidebar', 'aria-expanded': 'false' } });
    this.headersPanel = h(
      'section',
      { id: 'headers-panel', class: 'headers-panel', attrs: { 'aria-label': 'Request headers' } },
      h('label', { attrs: { for: 'headers' } }, 'Headers sent with every request, one "Name: value" per line'),
      this.headersInput,
      this.headerProblems,
      h('div', { class: 'actions compact' },
        h('label', { class: 'check' }, this.rememberBox, ' Remember on this device'),
        button('Reload the description with these headers', () => void this.reload(), { id: 'reload-document', class: 'primary' }),
      ),
      h('p', { class: 'hint' }, 'Kept for this tab (sessionStorage); "Remember on this device" keeps them in localStorage. The description lists what these credentials may call.'),
    );
    this.headersPanel.hidden = true;
    this.filterInput = h('input', { id: 'filter', attrs: { type: 'search', placeholder: 'Filter methods', 'aria-label': 'Filter methods' }, on: { input: () => this.filter() } });
    document.body.replaceChildren(
      h(
        'header',
        { class: 'topbar' },
        this.menuButton,
        h('div', { class: 'brand' }, this.title),
        h('div', { class: 'top-actions' }, this.streamsLink, this.batchLink, this.auth, this.headersToggle),
      ),
      this.headersPanel,
      this.documentError,
      h('div', { class: 'layout' }, h('aside', { id: 'sidebar' }, this.info, this.filterInput, this.nav), this.main),
      h('div', { id: 'backdrop', class: 'backdrop', on: { click: () => this.drawer(false) } }),
    );
    window.addEventListener('hashchange', () => this.route());
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.drawer(false);
    });
  }

  /** Reads the document (with the remembered headers) and shows the page; a refusal is shown with the server's reason. */
  async boot(): Promise<void> {
    const headers = parseHeaderLines(this.session.headers).headers;
    try {
      this.setDocument(await loadDocument(headers));
    } catch (error) {
      if (this.session.headers.trim() === '') throw error;
      // The remembered credentials are refused (an expired token): show why, and the anonymous description.
      this.setDocument(await loadDocument(new Headers()));
      this.showDocumentError(error, 'with the remembered headers; showing what an anonymous caller sees');
      this.showHeaders(true);
    }
  }

  private setDocument(doc: ExplorerDocument): void {
    this.doc = doc;
    const rpcUrl = rpcUrlOf(doc, location.origin);
    const streamsPath = streamsPathOf(doc);
    this.ctx = {
      doc,
      rpcUrl,
      streamsUrl: streamsPath ? new URL(streamsPath, location.origin).href : undefined,
      requestHeaders: () => this.requestHeaders(),
      batch: this.batch,
      batchChanged: () => this.renderBatchLink(),
      signIn: (method, token, params) => void this.signIn(method, token, params),
    };
    document.title = `${doc.info.title} · JSON-RPC explorer`;
    this.title.replaceChildren(doc.info.title, ' ', h('span', { class: 'version' }, doc.info.version));
    this.info.replaceChildren(
      h('p', { class: 'muted endpoint' }, 'Endpoint ', h('code', {}, rpcUrl), ` · OpenRPC ${doc.openrpc}`),
      doc.info.description ? h('div', { class: 'muted markdown' }, markdown(doc.info.description)) : '',
    );
    this.streamsLink.hidden = streamsPath === undefined;
    this.renderBatchLink();
    this.renderAuth();
    this.renderNav();
    this.viewRoute = undefined;
    this.route();
  }

  private renderBatchLink(): void {
    this.batchLink.textContent = `Batch (${this.batch.length})`;
  }

  private renderNav(): void {
    clear(this.nav);
    if (this.doc.methods.length === 0) this.nav.append(h('p', { class: 'muted' }, 'No methods are visible to this caller.'));
    for (const [tag, methods] of methodsByTag(this.doc.methods)) {
      this.nav.append(
        h(
          'section',
          { attrs: { 'data-tag': tag } },
          h('h2', {}, tag),
          h(
            'ul',
            {},
            ...methods.map((m) =>
              h(
                'li',
                {},
                h(
                  'a',
                  { attrs: { href: `#${encodeURIComponent(m.name)}`, 'data-method': m.name } },
                  m.name,
                  m.deprecated ? h('span', { class: 'badge' }, 'deprecated') : null,
                  m['x-stream'] ? h('span', { class: 'badge' }, m['x-stream'].durable ? 'durable' : 'stream') : null,
                ),
              ),
            ),
          ),
        ),
      );
    }
    this.filter();
  }

  private filter(): void {
    const needle = this.filterInput.value.trim().toLowerCase();
    for (const section of this.nav.querySelectorAll<HTMLElement>('section[data-tag]')) {
      let shown = 0;
      for (const link of section.querySelectorAll<HTMLElement>('[data-method]')) {
        const hidden = needle !== '' && !link.dataset.method!.toLowerCase().includes(needle);
        link.parentElement!.hidden = hidden;
        if (!hidden) shown++;
      }
      section.hidden = shown === 0;
    }
  }

  /** Shows what the hash names: a method (`#user.update`), the batch or the streams panel. Back and forward land here too. */
  private route(): void {
    let route = decodeURIComponent(location.hash.slice(1));
    if (route === '' && this.doc.methods[0]) {
      route = this.doc.methods[0].name;
      history.replaceState(null, '', `#${encodeURIComponent(route)}`);
    }
    if (route === this.viewRoute) return;
    const moved = this.shownRoute !== route;
    this.shownRoute = route;
    this.leaveView();
    this.viewRoute = route;
    const method = this.doc.methods.find((m) => m.name === route);
    if (route === BATCH_ROUTE) this.view = new BatchView(this.ctx);
    else if (route === STREAMS_ROUTE && this.ctx.streamsUrl) this.view = new StreamsView(this.ctx);
    else if (method) this.view = new MethodView(method, this.ctx, this.drafts.get(method.name));
    this.main.replaceChildren(this.view?.element ?? this.notFound(route));
    for (const link of this.nav.querySelectorAll('[data-method]')) {
      const selected = link.getAttribute('data-method') === route;
      link.classList.toggle('selected', selected);
      if (selected) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    this.batchLink.classList.toggle('selected', route === BATCH_ROUTE);
    this.streamsLink.classList.toggle('selected', route === STREAMS_ROUTE);
    document.body.dataset.view = this.view ? route : '';
    this.drawer(false);
    // A new page starts at its top; the same one re-rendered (a reload of the description) stays where it was.
    if (moved) window.scrollTo(0, 0);
  }

  private leaveView(): void {
    if (!this.view) return;
    const draft = this.view.draft?.();
    if (draft && this.viewRoute) this.drafts.set(this.viewRoute, draft);
    this.view.close();
    this.view = undefined;
  }

  private notFound(route: string): HTMLElement {
    const signIn = signInMethodOf(this.doc);
    return h(
      'article',
      { id: 'not-found' },
      h('h2', {}, route || 'Nothing to show'),
      this.doc.methods.length === 0
        ? h('p', {}, 'No methods are visible to this caller.')
        : h('p', {}, `"${route}" is not in the description this caller sees. `, signIn && !this.session.signedIn ? h('a', { attrs: { href: `#${encodeURIComponent(signIn.name)}` } }, 'Sign in') : null, signIn && !this.session.signedIn ? ' to see the methods that need credentials.' : null),
    );
  }

  private drawer(open: boolean): void {
    document.body.classList.toggle('drawer-open', open);
    this.menuButton.setAttribute('aria-expanded', String(open));
    if (open) this.filterInput.focus({ preventScroll: true });
  }

  private showHeaders(open: boolean): void {
    this.headersPanel.hidden = !open;
    this.headersToggle.setAttribute('aria-expanded', String(open));
  }

  private headersEdited(): void {
    this.session.headers = this.headersInput.value;
    // The sign-in's header line was removed or changed by hand: no longer "signed in".
    const signedIn = this.session.signedIn;
    if (signedIn && !parseHeaderLines(this.session.headers).headers.has(signedIn.header)) delete this.session.signedIn;
    saveSession(this.session, this.remember);
    this.renderAuth();
    clear(this.headerProblems);
  }

  /** The headers to send, or undefined (the panel opens with the problems) when a line is malformed. */
  private requestHeaders(): RequestHeaders | undefined {
    const { headers, pairs, problems } = parseHeaderLines(this.headersInput.value);
    clear(this.headerProblems);
    for (const p of problems) this.headerProblems.append(h('li', {}, p));
    if (problems.length) {
      this.showHeaders(true);
      return undefined;
    }
    return { headers, pairs };
  }

  private renderAuth(): void {
    const count = parseHeaderLines(this.headersInput.value).pairs.length;
    this.headersToggle.textContent = count ? `Headers (${count})` : 'Headers';
    const signedIn = this.session.signedIn;
    const signInMethod = this.doc ? signInMethodOf(this.doc) : undefined;
    if (signedIn) {
      this.auth.replaceChildren(h('span', { id: 'signed-in', class: 'signed-in', attrs: { title: `${signedIn.header} set by ${signedIn.method}` } }, 'Signed in as ', h('strong', {}, signedIn.label)), button('Sign out', () => void this.signOut(), { id: 'sign-out', class: 'small' }));
    } else if (signInMethod) {
      this.auth.replaceChildren(h('a', { id: 'sign-in', class: 'top-link', attrs: { href: `#${encodeURIComponent(signInMethod.name)}` } }, 'Sign in'));
    } else {
      clear(this.auth);
    }
  }

  /** "Use this token": the header goes in the headers, is remembered, and the description is read again as that caller. */
  private async signIn(method: ExplorerMethod, token: string, params: unknown): Promise<void> {
    const info = method['x-sign-in']!;
    this.headersInput.value = withHeaderLine(this.headersInput.value, info.header, signInHeaderValue(info, token));
    this.session = { headers: this.headersInput.value, signedIn: { header: info.header, label: signInLabel(token, params), method: method.name } };
    saveSession(this.session, this.remember);
    this.renderAuth();
    await this.reload();
  }

  private async signOut(): Promise<void> {
    const header = this.session.signedIn?.header;
    this.headersInput.value = header ? withHeaderLine(this.headersInput.value, header, undefined) : this.headersInput.value;
    this.session = { headers: this.headersInput.value };
    saveSession(this.session, this.remember);
    this.renderAuth();
    await this.reload();
  }

  /** Reads the description again with the headers: the selected method and what was typed stay. */
  private async reload(): Promise<void> {
    const headers = this.requestHeaders();
    if (!headers) return;
    clear(this.documentError);
    try {
      const doc = await loadDocument(headers.headers);
      this.leaveView();
      this.setDocument(doc);
      document.body.dataset.reloaded = String(Number(document.body.dataset.reloaded ?? '0') + 1);
    } catch (error) {
      this.showDocumentError(error, 'with these headers; the page still shows the previous description');
      document.body.dataset.reloadFailed = String(Number(document.body.dataset.reloadFailed ?? '0') + 1);
    }
  }

  private showDocumentError(error: unknown, what: string): void {
    const body = error instanceof DocumentError ? error.body : undefined;
    this.documentError.replaceChildren(
      h('p', { class: 'bad' }, `The description was refused ${what}. ${(error as Error).message}`),
      body ? h('pre', { id: 'document-error-body', class: 'code' }, body) : '',
      this.session.signedIn ? button('Sign out', () => void this.signOut(), { class: 'small' }) : '',
      button('Dismiss', () => clear(this.documentError), { class: 'small' }),
    );
  }
}

async function boot(): Promise<void> {
  try {
    await new Explorer().boot();
    document.body.dataset.ready = 'true';
  } catch (error) {
    const body = error instanceof DocumentError ? error.body : undefined;
    document.body.replaceChildren(
      h('main', { class: 'boot-error' }, h('p', { id: 'boot-error', class: 'bad' }, `Could not load the API description: ${(error as Error).message}`), body ? h('pre', { id: 'boot-error-body', class: 'code' }, body) : ''),
    );
    document.body.dataset.ready = 'error';
  }
}

void boot();
