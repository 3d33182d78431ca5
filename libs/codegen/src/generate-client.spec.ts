import ts from 'typescript';
import { generateClient } from './generate-client.js';
import { pascalCase, propertyKey, commentText, TypeNames } from './typescript-names.js';

const doc = (methods: unknown[], schemas: Record<string, unknown> = {}) => ({
  openrpc: '1.3.2',
  info: { title: 'T', version: '1' },
  methods,
  components: { schemas },
});

/** Syntax errors of generated code (type errors need the client; the e2e suite runs tsc for those). */
function syntaxErrors(code: string): string[] {
  const out = ts.transpileModule(code, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  return (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('generateClient', () => {
  it('names types from method names and keeps non-identifier keys quoted', async () => {
    const code = await generateClient(
      doc([
        { name: 'user-profile.get_v2', params: [{ name: 'user id', required: true, schema: { type: 'string' } }], result: { name: 'result', schema: { type: 'boolean' } } },
        { name: 'delete', params: [], result: { name: 'result', schema: {} } },
      ]),
    );
    expect(code).toContain('export interface UserProfileGetV2Params {\n  "user id": string;\n}');
    expect(code).toContain('export type UserProfileGetV2Result = boolean;');
    expect(code).toContain('export type DeleteResult = unknown;');
    expect(code).toContain('"user-profile": {');
    expect(code).toContain('get_v2: (params: UserProfileGetV2Params, options?: CallOptions): Promise<UserProfileGetV2Result> =>');
    expect(code).toContain('"delete": (params?: JsonRpcParams, options?: CallOptions): Promise<DeleteResult> =>');
    expect(syntaxErrors(code)).toEqual([]);
  });

  it('lets a method also be a namespace', async () => {
    const code = await generateClient(doc([
      { name: 'a', params: [], result: { name: 'result', schema: { type: 'integer' } } },
      { name: 'a.b', params: [], result: { name: 'result', schema: { type: 'string' } } },
    ]));
    expect(code).toMatch(/a: Object\.assign\(\(params\?: JsonRpcParams, options\?: CallOptions\): Promise<AResult> =>\s+client\.call<AResult>\("a", asParams\(params\), options\), \{\s+b: /);
    expect(syntaxErrors(code)).toEqual([]);
  });

  it('keeps a property named "title", drops schema titles, and gives clashing names a number', async () => {
    const code = await generateClient(
      doc(
        [{ name: 'book.get', params: [], result: { name: 'result', schema: { $ref: '#/components/schemas/Book' } } }],
        {
          Book: { title: 'Renamed', type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false },
          BookGetResult: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false },
        },
      ),
    );
    expect(code).toContain('export interface Book {\n  title: string;\n}');
    expect(code).toContain('export interface BookGetResult {\n  x?: number;\n}');
    expect(code).toContain('export type BookGetResult2 = Book;');
    expect(code).not.toContain('Renamed');
  });

  it('keeps document text inside comments and never follows external $refs', async () => {
    const code = await generateClient(
      doc([
        {
          name: 'x.y',
          summary: 'ends */ here; alert(1)',
          deprecated: true,
          params: [{ name: 'p', required: false, schema: { $ref: 'https://example.invalid/schema.json' } }],
          result: { name: 'result', schema: { $ref: '#/components/schemas/Missing' } },
        },
      ]),
    );
    expect(code).toContain('* ends *\\/ here; alert(1)');
    expect(code).toContain('* @deprecated');
    expect(code).toContain('export interface XYParams {\n  p?: unknown;\n}');
    expect(code).toContain('export type XYResult = unknown;');
    expect(syntaxErrors(code)).toEqual([]);
  });

  it('refuses a document it cannot read', async () => {
    await expect(generateClient({ openrpc: '1.3.2', info: { title: 'x' }, methods: {} })).rejects.toThrow('Not an OpenRPC document: "methods" is not an array');
    await expect(generateClient(doc([{ name: 'a', params: [] }, { name: 'a', params: [] }]))).rejects.toThrow('method "a" appears twice');
    await expect(generateClient(doc([{ name: 'a', params: [{ $ref: '#/components/contentDescriptors/P' }] }]))).rejects.toThrow('references are not supported');
  });
});

describe('typescript names', () => {
  it('makes identifiers and keys safe', () => {
    expect(pascalCase('math.add')).toBe('MathAdd');
    expect(pascalCase('2fa.verify')).toBe('T2faVerify');
    expect(pascalCase('...')).toBe('Unnamed');
    expect(propertyKey('ok_1')).toBe('ok_1');
    expect(propertyKey('class')).toBe('"class"');
    expect(propertyKey('a"b')).toBe('"a\\"b"');
    expect(commentText('a */ b\r\nc')).toBe('a *\\/ b\nc');
    const names = new TypeNames(['RpcApi']);
    expect([names.take('RpcApi'), names.take('X'), names.take('X')]).toEqual(['RpcApi2', 'X', 'X2']);
  });
});
