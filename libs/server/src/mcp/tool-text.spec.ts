import { MCP_FORMAT_NAMES } from '../options/mcp-options.js';
import {
  chooseToolTextFormat,
  isMcpFormatName,
  renderToolErrorText,
  renderToolText,
  unknownFormatMessage,
} from './tool-text.js';

describe('tool text formats', () => {
  it('lists the five formats and recognises only them', () => {
    expect(MCP_FORMAT_NAMES).toEqual(['json', 'pretty_json', 'markdown', 'plain', 'toon']);
    for (const f of MCP_FORMAT_NAMES) expect(isMcpFormatName(f)).toBe(true);
    for (const v of ['JSON', 'yaml', '', ' json', undefined, null, 1, ['json']]) expect(isMcpFormatName(v)).toBe(false);
  });

  it('json is compact JSON.stringify; undefined reads null', () => {
    expect(renderToolText({ a: 1, b: [1, 'x'] }, 'json')).toBe('{"a":1,"b":[1,"x"]}');
    expect(renderToolText('hi', 'json')).toBe('"hi"');
    expect(renderToolText(null, 'json')).toBe('null');
    expect(renderToolText(undefined, 'json')).toBe('null');
  });

  it('pretty_json is JSON.stringify(v, null, 2)', () => {
    expect(renderToolText({ a: 1, b: [1] }, 'pretty_json')).toBe('{\n  "a": 1,\n  "b": [\n    1\n  ]\n}');
    expect(renderToolText(undefined, 'pretty_json')).toBe('null');
  });

  it('plain: strings unquoted, null/undefined "(no result)", anything else compact JSON', () => {
    expect(renderToolText('line one\nline "two"', 'plain')).toBe('line one\nline "two"');
    expect(renderToolText('', 'plain')).toBe('');
    expect(renderToolText(null, 'plain')).toBe('(no result)');
    expect(renderToolText(undefined, 'plain')).toBe('(no result)');
    expect(renderToolText(42, 'plain')).toBe('42');
    expect(renderToolText(false, 'plain')).toBe('false');
    expect(renderToolText({ a: 'x' }, 'plain')).toBe('{"a":"x"}');
  });

  describe('markdown', () => {
    it('a list of flat objects with the same keys is a table, and the table is the whole text', () => {
      expect(renderToolText([{ id: 1, name: 'Ada', admin: true }, { id: 2, name: 'Bob', admin: false }], 'markdown')).toBe(
        '| id | name | admin |\n| --- | --- | --- |\n| 1 | Ada | true |\n| 2 | Bob | false |',
      );
    });

    it('keys in the first object\'s order; another order of the same keys still fits', () => {
      expect(renderToolText([{ a: 1, b: 2 }, { b: 4, a: 3 }], 'markdown')).toBe('| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |');
    });

    it('escapes | and line breaks in cells and headers; null is an empty cell', () => {
      expect(renderToolText([{ 'x|y': 'a|b', note: 'one\ntwo\r\nthree\rfour', n: null }], 'markdown')).toBe(
        '| x\\|y | note | n |\n| --- | --- | --- |\n| a\\|b | one<br>two<br>three<br>four |  |',
      );
    });

    it('one row and 25 rows, 6 columns, are tables', () => {
      expect(renderToolText([{ k: 'v' }], 'markdown')).toBe('| k |\n| --- |\n| v |');
      const six = { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 };
      const text = renderToolText(Array.from({ length: 25 }, () => six), 'markdown');
      expect(text.split('\n')).toHaveLength(27);
      expect(text.startsWith('| a | b | c | d | e | f |\n| --- | --- | --- | --- | --- | --- |\n')).toBe(true);
    });

    it('null and undefined are "(no result)"', () => {
      expect(renderToolText(null, 'markdown')).toBe('(no result)');
      expect(renderToolText(undefined, 'markdown')).toBe('(no result)');
    });

    it('anything that is not such a list is pretty JSON', () => {
      const pretty = (v: unknown) => JSON.stringify(v, null, 2);
      const cases: unknown[] = [
        [],
        Array.from({ length: 26 }, (_, i) => ({ i })),
        [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 }],
        [{ a: 1 }, { b: 1 }],
        [{ a: 1 }, { a: 1, b: 2 }],
        [{ a: { nested: true } }],
        [{ a: [1] }],
        [{}],
        [{ a: 1 }, 2],
        [[1, 2]],
        { a: 1 },
        'text',
        7,
      ];
      for (const v of cases) expect(renderToolText(v, 'markdown')).toBe(pretty(v));
    });
  });

  it('toon is what @toon-format/toon prints', () => {
    expect(renderToolText([{ id: 1, name: 'Ada' }, { id: 2, name: 'Bob' }], 'toon')).toBe('[2]{id,name}:\n  1,Ada\n  2,Bob');
    expect(renderToolText({ a: 1, b: [1, 2] }, 'toon')).toBe('a: 1\nb[2]: 1,2');
    expect(renderToolText('hello', 'toon')).toBe('hello');
    expect(renderToolText(null, 'toon')).toBe('null');
  });
});

describe('tool error text', () => {
  it('first line exactly "Error <code>: <message>", nothing else for other codes', () => {
    expect(renderToolErrorText({ code: -32001, message: 'Access denied' })).toBe('Error -32001: Access denied');
    expect(renderToolErrorText({ code: -32603, message: 'Internal error' })).toBe('Error -32603: Internal error');
    expect(renderToolErrorText({ code: 1001, message: 'Insufficient funds', data: [{ path: 'x', message: 'no' }] })).toBe(
      'Error 1001: Insufficient funds',
    );
    expect(renderToolErrorText({ code: -32003, message: 'Rate limit exceeded for m.x', data: { retryAfter: 3 } })).toBe(
      'Error -32003: Rate limit exceeded for m.x',
    );
  });

  it('-32602: one "  - <path>: <message>" line per violation, in order', () => {
    expect(
      renderToolErrorText({
        code: -32602,
        message: 'Invalid params',
        data: [
          { path: 'email', message: 'email must be an email', code: 'isEmail' },
          { path: 'items.0.qty', message: 'qty must not be less than 1', code: 'min' },
          { path: 'extra', message: 'Unknown parameter', code: null },
        ],
      }),
    ).toBe(
      'Error -32602: Invalid params\n  - email: email must be an email\n  - items.0.qty: qty must not be less than 1\n  - extra: Unknown parameter',
    );
  });

  it('-32602: a violation without a path reads "(params)"; without data, only the first line', () => {
    expect(
      renderToolErrorText({ code: -32602, message: 'Invalid params', data: [{ path: null, message: 'a must be a number', code: null }] }),
    ).toBe('Error -32602: Invalid params\n  - (params): a must be a number');
    expect(renderToolErrorText({ code: -32602, message: 'Invalid params' })).toBe('Error -32602: Invalid params');
    expect(renderToolErrorText({ code: -32602, message: 'Invalid params', data: { why: 'x' } })).toBe('Error -32602: Invalid params');
  });
});

describe('choosing the format', () => {
  it('header, then ?format=, then the decorator, then the default', () => {
    expect(chooseToolTextFormat({ header: 'toon', query: 'plain', decorator: 'markdown', fallback: 'json' })).toEqual({ format: 'toon' });
    expect(chooseToolTextFormat({ query: 'plain', decorator: 'markdown', fallback: 'json' })).toEqual({ format: 'plain' });
    expect(chooseToolTextFormat({ decorator: 'markdown', fallback: 'json' })).toEqual({ format: 'markdown' });
    expect(chooseToolTextFormat({ fallback: 'pretty_json' })).toEqual({ format: 'pretty_json' });
  });

  it('an empty header or query counts as not given', () => {
    expect(chooseToolTextFormat({ header: '', query: 'plain', fallback: 'json' })).toEqual({ format: 'plain' });
    expect(chooseToolTextFormat({ header: '', query: '', fallback: 'json' })).toEqual({ format: 'json' });
  });

  it('an unknown value is refused, not skipped, even when a later source is valid', () => {
    expect(chooseToolTextFormat({ header: 'yaml', query: 'json', fallback: 'json' })).toEqual({ invalid: 'yaml' });
    expect(chooseToolTextFormat({ query: 'JSON', decorator: 'plain', fallback: 'json' })).toEqual({ invalid: 'JSON' });
  });

  it('the refusal message lists the allowed formats and truncates a long value', () => {
    expect(unknownFormatMessage('yaml')).toBe('Unknown format "yaml"; allowed formats: json, pretty_json, markdown, plain, toon');
    expect(unknownFormatMessage('x'.repeat(500))).toBe(
      `Unknown format "${'x'.repeat(64)}…"; allowed formats: json, pretty_json, markdown, plain, toon`,
    );
  });
});
