import { button, h, type Child } from './dom.js';

/** Bodies longer than this are shown without highlighting: thousands of spans would make the page crawl. */
const HIGHLIGHT_LIMIT = 200_000;

/**
 * Pretty JSON as spans (`j-key`, `j-str`, `j-num`, `j-lit`, the rest as text). The input is the
 * page's own `JSON.stringify` output, so one regular expression over its tokens is exact; every
 * piece is a text node, so nothing in a value becomes markup.
 */
export function highlightJson(text: string): Node[] {
  if (text.length > HIGHLIGHT_LIMIT) return [document.createTextNode(text)];
  const nodes: Node[] = [];
  const token = /("(?:\\.|[^"\\])*")(\s*:)?|\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
  let last = 0;
  for (let match = token.exec(text); match; match = token.exec(text)) {
    if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
    const [whole, string, colon] = match;
    if (string !== undefined) {
      nodes.push(h('span', { class: colon ? 'j-key' : 'j-str' }, string));
      if (colon) nodes.push(document.createTextNode(colon));
    } else {
      nodes.push(h('span', { class: /^[-\d]/.test(whole) ? 'j-num' : 'j-lit' }, whole));
    }
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

/**
 * Copies `text`: the async clipboard API where the page is a secure context (https, localhost),
 * else a selected hidden textarea and `execCommand('copy')`, which plain-http pages still allow.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the older way
  }
  const area = h('textarea', { class: 'offscreen', attrs: { readonly: '', 'aria-hidden': 'true' } });
  area.value = text;
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

/** A "Copy" button that copies `text()` and says whether it worked. */
export function copyButton(text: () => string, props: { id?: string; label?: string } = {}): HTMLButtonElement {
  const label = props.label ?? 'Copy';
  const copy: HTMLButtonElement = button(label, () => {
    void copyText(text()).then((ok) => {
      copy.textContent = ok ? 'Copied' : 'Copy failed: select the text';
      copy.dataset.copied = String(ok);
      setTimeout(() => (copy.textContent = label), 1500);
    });
  }, { id: props.id, class: 'copy', attrs: { title: 'Copy to the clipboard' } });
  return copy;
}

/**
 * A titled block of code with a copy button. `json`: the text is highlighted. The `pre` carries
 * `id`, and its `textContent` is exactly `text` (highlighting only wraps pieces in spans).
 */
export function codeBlock(props: { id: string; title: Child; text: string; json?: boolean; extra?: Child }): HTMLElement {
  const pre = h('pre', { id: props.id, class: props.json ? 'code json' : 'code' });
  pre.append(...(props.json ? highlightJson(props.text) : [document.createTextNode(props.text)]));
  return h(
    'div',
    { class: 'code-block' },
    h('div', { class: 'code-head' }, h('span', { class: 'code-title' }, props.title), props.extra, copyButton(() => props.text, { id: `${props.id}-copy` })),
    pre,
  );
}
