import { Lexer, type Token, type Tokens } from 'marked';
import { append, h, type Child } from './dom.js';

/**
 * Markdown (descriptions in the document) as DOM nodes. marked only tokenises; this renderer
 * builds elements with `textContent`, so there is no HTML string anywhere: raw HTML in the
 * source shows as the text it is, links keep only http(s), mailto and same-origin targets, and
 * images become links (the page's CSP loads no image from elsewhere anyway).
 */
export function markdown(source: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  let tokens: Token[];
  try {
    tokens = Lexer.lex(source, { gfm: true, breaks: false });
  } catch {
    fragment.append(h('p', {}, source));
    return fragment;
  }
  append(fragment, ...tokens.map(block));
  return fragment;
}

function block(token: Token): Child {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case 'space':
    case 'def':
      return null;
    case 'paragraph':
      return h('p', {}, ...inline(t.tokens));
    case 'heading':
      // Headings inside a method's description sit below its name (h2) and the page's sections (h3).
      return h(`h${Math.min(6, Math.max(4, (t as Tokens.Heading).depth + 3))}` as 'h4', {}, ...inline(t.tokens));
    case 'code':
      return h('pre', { class: 'code' }, h('code', {}, (t as Tokens.Code).text));
    case 'blockquote':
      return h('blockquote', {}, ...(t.tokens ?? []).map(block));
    case 'hr':
      return h('hr');
    case 'list': {
      const list = t as Tokens.List;
      const items = list.items.map((item) =>
        h('li', {}, item.task ? h('input', { attrs: { type: 'checkbox', disabled: '', ...(item.checked ? { checked: '' } : {}) } }) : null, ...item.tokens.map((child) => (child.type === 'text' ? inlineOf(child) : block(child)))),
      );
      return list.ordered ? h('ol', { attrs: { start: list.start === '' || list.start === 1 ? undefined : String(list.start) } }, ...items) : h('ul', {}, ...items);
    }
    case 'table': {
      const table = t as Tokens.Table;
      return h(
        'div',
        { class: 'table-scroll' },
        h('table', {}, h('thead', {}, h('tr', {}, ...table.header.map((cell) => h('th', {}, ...inline(cell.tokens))))), h('tbody', {}, ...table.rows.map((row) => h('tr', {}, ...row.map((cell) => h('td', {}, ...inline(cell.tokens))))))),
      );
    }
    case 'text':
      return h('p', {}, inlineOf(t));
    default:
      // `html` blocks and anything unknown: the source, as text.
      return h('p', {}, t.raw);
  }
}

function inlineOf(token: Tokens.Generic): Child {
  const fragment = document.createDocumentFragment();
  append(fragment, ...(token.tokens ? inline(token.tokens) : [decodeEntities(token.text ?? token.raw)]));
  return fragment;
}

function inline(tokens: Token[] | undefined): Child[] {
  return (tokens ?? []).map((token) => {
    const t = token as Tokens.Generic;
    switch (t.type) {
      case 'text':
        return inlineOf(t);
      case 'escape':
        return t.text;
      case 'strong':
        return h('strong', {}, ...inline(t.tokens));
      case 'em':
        return h('em', {}, ...inline(t.tokens));
      case 'del':
        return h('del', {}, ...inline(t.tokens));
      case 'codespan':
        return h('code', {}, t.text);
      case 'br':
        return h('br');
      case 'link': {
        const href = safeHref((t as Tokens.Link).href);
        return href ? h('a', { attrs: { href, rel: 'noopener noreferrer', target: '_blank' } }, ...inline(t.tokens)) : h('span', {}, ...inline(t.tokens));
      }
      case 'image': {
        const href = safeHref((t as Tokens.Image).href);
        const label = `image: ${(t as Tokens.Image).text || (t as Tokens.Image).href}`;
        return href ? h('a', { attrs: { href, rel: 'noopener noreferrer', target: '_blank' } }, label) : label;
      }
      default:
        // Inline HTML (`<b>`, `<img onerror>`) and anything unknown: shown as the source text.
        return t.raw;
    }
  });
}

/** Absolute http(s) and mailto links, and links on this origin; `javascript:`, `data:` and the rest are dropped. */
function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href, location.href);
    if (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:') return url.href;
  } catch {
    // not a URL
  }
  return undefined;
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** marked leaves character references in text tokens (its HTML renderer would let the browser decode them). */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
  });
}
