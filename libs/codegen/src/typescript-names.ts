/** Identifier rules for generated code: everything from the document is data, never code. */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(
  ('break case catch class const continue debugger default delete do else enum export extends false finally for function if import in ' +
    'instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package ' +
    'private protected public await').split(' '),
);

/** `math.add` + `Params` -> `MathAddParams`; `user-profile.get_v2` -> `UserProfileGetV2`. */
export function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  return joined === '' ? 'Unnamed' : /^[0-9]/.test(joined) ? `T${joined}` : joined;
}

/** A property key as written in an object literal or a type: bare when it can be. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) && !RESERVED.has(name) ? name : JSON.stringify(name);
}

/** Text safe inside a `/** ... *\/` comment. */
export function commentText(text: string): string {
  return text.replace(/\*\//g, '*\\/').replace(/\r\n?/g, '\n');
}

/** Hands out unique type names (a suffix number on a clash). */
export class TypeNames {
  private readonly used = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.used.add(name);
  }

  take(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.used.has(name); n++) name = `${wanted}${n}`;
    this.used.add(name);
    return name;
  }
}
