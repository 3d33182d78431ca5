import { codeBlock, copyText } from './code-block.js';
import { button, clear, h } from './dom.js';
import { CODE_LANGUAGES, requestCode, type RequestSpec } from './request-code.js';

/**
 * "Copy as curl / fetch / @nest-jsonrpc/client": each button writes the request the page would
 * send now (the form, the headers) in that language, shows it and copies it. `spec` answers
 * undefined when the request cannot be built (its params are not valid: the form says why).
 */
export function codePanel(spec: () => RequestSpec | undefined, prefix = ''): HTMLElement {
  const shown = h('div', { class: 'code-shown' });
  const buttons = CODE_LANGUAGES.map(({ language, label }) =>
    button(`Copy as ${label}`, () => {
      const request = spec();
      clear(shown);
      if (!request) {
        shown.append(h('p', { class: 'bad' }, 'Fix the params first: the request cannot be written as code yet.'));
        return;
      }
      const text = requestCode(request, language);
      shown.append(codeBlock({ id: `${prefix}code-snippet`, title: label, text }));
      shown.dataset.language = language;
      void copyText(text).then((ok) => (shown.dataset.copied = String(ok)));
    }, { id: `${prefix}copy-${language}`, class: 'small' }),
  );
  return h('section', { class: 'code-panel' }, h('div', { class: 'actions compact' }, ...buttons), shown);
}
