/**
 * The only way the explorer builds DOM: text goes through `textContent` and attributes through
 * `setAttribute`, so a description or a result containing HTML shows as text. No innerHTML.
 */
export type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  id?: string;
  attrs?: Record<string, string | undefined>;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  if (props.id) element.id = props.id;
  for (const [name, value] of Object.entries(props.attrs ?? {})) if (value !== undefined) element.setAttribute(name, value);
  for (const [name, listener] of Object.entries(props.on ?? {})) element.addEventListener(name, listener as EventListener);
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/** A `type="button"` button (never a form submit). */
export function button(label: Child, onClick: () => void, props: Props = {}): HTMLButtonElement {
  return h('button', { ...props, attrs: { type: 'button', ...props.attrs }, on: { ...props.on, click: () => onClick() } }, label);
}

/** JSON for display: pretty, and never throws (a cycle or a BigInt shows as a note). */
export function pretty(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** A message of anything thrown (JsonRpcError: `code message`). */
export function describeError(error: unknown): string {
  const e = error as { code?: number; message?: string } | null;
  if (e && typeof e.code === 'number') return `${e.code} ${e.message ?? ''}`.trim();
  return e?.message ?? String(error);
}
