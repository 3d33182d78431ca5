import { codeBlock } from './code-block.js';
import { codePanel } from './code-panel.js';
import type { ExplorerContext, RequestHeaders } from './context.js';
import type { DurableFollower } from './durable-follower.js';
import { button, h, pretty } from './dom.js';
import { OutcomeView, postJson } from './exchange.js';
import { markdown } from './markdown.js';
import { resolveSchema, takesNoParams, type ExplorerMethod } from './openrpc-view.js';
import { ParamsForm, type ParamsDraft } from './params-form.js';
import { paramsValidator, type FieldError } from './params-validator.js';
import type { RequestSpec } from './request-code.js';
import { tokenAt } from './session.js';
import { durableStreamPanel, liveStreamPanel } from './stream-panels.js';

/**
 * One method's page: what it is (summary, Markdown description, schemas, errors), its params
 * form, what can be done with it (call, notify, add to a batch, stream, start a durable
 * stream), the request as code, and the outcome of the last attempt only.
 */
export class MethodView {
  readonly element: HTMLElement;
  private readonly form: ParamsForm | undefined;
  private readonly output = new OutcomeView();
  private readonly validateBox = h('input', { id: 'validate-first', attrs: { type: 'checkbox', checked: '' } });
  private readonly batchNote = h('p', { id: 'batch-note', class: 'muted', attrs: { 'aria-live': 'polite' } });
  private follower: DurableFollower | undefined;
  private readonly validate: (params: unknown) => FieldError[];

  constructor(private readonly method: ExplorerMethod, private readonly ctx: ExplorerContext, draft: ParamsDraft | undefined) {
    const doc = ctx.doc;
    this.validate = paramsValidator(method, doc);
    if (!takesNoParams(method)) {
      this.form = new ParamsForm(method, doc, () => this.form!.clearErrors(), () => this.element.querySelector<HTMLButtonElement>('.actions button.primary')?.click());
      if (draft) this.form.restore(draft);
    }
    const stream = method['x-stream'];
    const inputs = { attempt: () => this.attempt(), output: this.output };
    let actions: HTMLElement;
    if (stream?.durable) {
      const panel = durableStreamPanel(method, ctx, inputs);
      this.follower = panel.follower;
      actions = panel.element;
    } else if (stream) {
      actions = liveStreamPanel(method, ctx, inputs);
    } else {
      actions = h(
        'div',
        { class: 'actions' },
        button('Call', () => void this.call(false), { id: 'call', class: 'primary' }),
        button('Send as notification', () => void this.call(true), { id: 'notify' }),
        button('Add to batch', () => this.addToBatch(false), { id: 'batch-add' }),
        button('Add to batch as notification', () => this.addToBatch(true), { id: 'batch-add-notification' }),
      );
    }
    const resultSchema = method.result ? resolveSchema(method.result.schema, doc) : {};
    this.element = h(
      'article',
      { class: 'method-view' },
      h(
        'h2',
        { id: 'method-name' },
        method.name,
        method.deprecated ? h('span', { class: 'badge warn' }, 'deprecated') : null,
        stream ? h('span', { class: 'badge' }, stream.durable ? 'durable stream' : `stream · ${stream.format}`) : null,
        method['x-sign-in'] ? h('span', { class: 'badge' }, 'sign-in') : null,
      ),
      method.summary ? h('p', { id: 'method-summary', class: 'summary' }, method.summary) : null,
      method.description ? h('div', { id: 'method-description', class: 'description markdown' }, markdown(method.description)) : null,
      stream
        ? h('p', { class: 'muted', id: 'stream-info' }, stream.durable ? `Durable stream (started on ${new URL(ctx.rpcUrl).pathname}, events at ${stream.streamsPath ?? ''}/:id)` : `Stream: ${stream.format} on ${stream.path}`)
        : null,
      this.form ? this.form.element : h('p', { id: 'no-params', class: 'muted' }, 'Takes no params.'),
      this.form ? h('label', { class: 'inline' }, this.validateBox, ' Validate params against the schema before sending') : null,
      actions,
      this.batchNote,
      codePanel(() => this.spec()),
      this.output.element,
      h('details', { class: 'schema' }, h('summary', {}, stream ? 'Row schema' : 'Result schema'), codeBlock({ id: 'result-schema', title: stream ? 'One row' : 'Result', text: pretty(resultSchema), json: true })),
      method.errors?.length
        ? h('details', { class: 'schema' }, h('summary', {}, `Errors (${method.errors.length})`), h('ul', { id: 'method-errors' }, ...method.errors.map((e) => h('li', {}, h('code', {}, String(e.code)), ' ', e.message))))
        : null,
    );
  }

  draft(): ParamsDraft | undefined {
    return this.form?.draft();
  }

  /** The page moves on: a followed durable stream is detached (it runs on). */
  close(): void {
    this.follower?.close();
  }

  /** The params to send, or null (their errors shown at the fields) when they are not valid. */
  private params(): { params: unknown; problems: number } {
    if (!this.form) return { params: undefined, problems: 0 };
    const { params, errors } = this.form.read();
    const found: FieldError[] = [...errors];
    if (!errors.length && this.validateBox.checked) found.push(...this.validate(params ?? {}));
    this.form.showErrors(found);
    return { params, problems: found.length };
  }

  /** A new attempt's headers and params; undefined (and the reason shown as "not sent") when either is not valid. */
  private attempt(): { headers: RequestHeaders; params: unknown } | undefined {
    const headers = this.ctx.requestHeaders();
    if (!headers) {
      this.output.validation('A header line is malformed (see Headers); nothing was sent');
      return undefined;
    }
    const { params, problems } = this.params();
    if (problems) {
      this.output.validation(`${problems} problem${problems === 1 ? '' : 's'} with the params, shown at the fields; nothing was sent`);
      return undefined;
    }
    return { headers, params };
  }

  private envelope(params: unknown, notification: boolean) {
    return { jsonrpc: '2.0' as const, method: this.method.name, ...(params === undefined ? {} : { params }), ...(notification ? {} : { id: 1 }) };
  }

  /** The request the page would send now, for "copy as …" (undefined when it cannot be built). */
  private spec(): RequestSpec | undefined {
    const headers = this.ctx.requestHeaders();
    const { params, problems } = this.params();
    if (!headers || problems) return undefined;
    const stream = this.method['x-stream'];
    const base = { rpcUrl: this.ctx.rpcUrl, headers: headers.pairs, body: this.envelope(params, false) };
    if (stream && !stream.durable) return { ...base, kind: 'stream', streamUrl: new URL(stream.path, this.ctx.rpcUrl).href };
    return { ...base, kind: 'call', durable: stream?.durable && this.ctx.streamsUrl ? { streamsUrl: this.ctx.streamsUrl } : undefined };
  }

  private async call(notification: boolean): Promise<void> {
    this.output.clear();
    const attempt = this.attempt();
    if (!attempt) return;
    this.output.pending();
    try {
      const exchange = await postJson(this.ctx.rpcUrl, this.envelope(attempt.params, notification), attempt.headers.headers);
      this.output.exchange(exchange);
      const response = exchange.response as { result?: unknown; error?: { code?: number; data?: unknown } } | undefined;
      if (response?.error?.code === -32602 && Array.isArray(response.error.data)) this.showServerViolations(response.error.data);
      if (response && 'result' in response) this.offerSignIn(response.result, attempt.params);
    } catch (error) {
      this.output.network(error);
    }
  }

  /** The server's -32602 violations, listed by path, and shown at the fields too. */
  private showServerViolations(data: unknown[]): void {
    const violations = data.map((v) => v as { path?: unknown; message?: unknown });
    this.form?.showErrors(violations.map((v) => ({ field: String(v.path ?? '').split('.')[0], path: String(v.path ?? ''), message: String(v.message ?? '') })));
    this.output.append(
      h('h4', {}, 'Invalid params (from the server)'),
      h('ul', { id: 'server-violations', class: 'errors' }, ...violations.map((v) => h('li', { attrs: { 'data-path': String(v.path ?? '') } }, `${v.path || '(params)'}: ${String(v.message ?? '')}`))),
    );
  }

  /** The sign-in method answered: offer to send its token from now on. */
  private offerSignIn(result: unknown, params: unknown): void {
    const signIn = this.method['x-sign-in'];
    if (!signIn) return;
    const token = tokenAt(result, signIn.tokenPath);
    if (!token) {
      this.output.append(h('p', { class: 'bad' }, `No token at "${signIn.tokenPath}" in this result: nothing to sign in with.`));
      return;
    }
    this.output.append(
      h(
        'div',
        { class: 'sign-in-offer' },
        h('span', {}, `This answer carries a token for the ${signIn.header} header.`),
        button('Use this token', () => this.ctx.signIn(this.method, token, params), { id: 'use-token', class: 'primary' }),
      ),
    );
  }

  private addToBatch(notification: boolean): void {
    this.output.clear();
    const { params, problems } = this.params();
    if (problems) {
      this.output.validation(`${problems} problem${problems === 1 ? '' : 's'} with the params, shown at the fields; not added to the batch`);
      return;
    }
    this.ctx.batch.push({ method: this.method.name, params, notification });
    this.ctx.batchChanged();
    this.batchNote.replaceChildren(`Added to the batch (${this.ctx.batch.length} ${this.ctx.batch.length === 1 ? 'entry' : 'entries'}). `, h('a', { id: 'open-batch-link', attrs: { href: '#!batch' } }, 'Open the batch'));
  }
}
