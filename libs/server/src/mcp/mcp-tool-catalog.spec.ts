import type { RpcMcpOptions } from '../decorators/rpc-mcp.js';
import { resolveMcpOptions, type JsonRpcMcpOptions } from '../options/mcp-options.js';
import { OptionProblems } from '../options/option-checks.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import { RpcAccessRule } from '../security/rpc-access-rule.js';
import { isExposedAsTool, McpToolCatalog } from './mcp-tool-catalog.js';

function method(name: string, extra: { mcp?: RpcMcpOptions; deprecated?: boolean; cache?: boolean; result?: unknown; params?: unknown } = {}): RpcMethodDefinition {
  return {
    name,
    options: {},
    mcp: extra.mcp,
    deprecation: extra.deprecated ? `${name}: deprecated` : undefined,
    cache: extra.cache ? { ttl: 10 } : undefined,
    stream: undefined,
    schemas: { params: { structure: 'by-name', described: true, descriptors: [], schema: (extra.params ?? {}) as never }, result: (extra.result ?? {}) as never, row: undefined },
  } as unknown as RpcMethodDefinition;
}

function options(o: JsonRpcMcpOptions) {
  const problems = new OptionProblems();
  const resolved = resolveMcpOptions({ enabled: true, ...o }, [], problems);
  expect(problems.list).toEqual([]);
  return resolved;
}

describe('isExposedAsTool: the first matching rule wins', () => {
  const cases: Array<[string, RpcMethodDefinition, JsonRpcMcpOptions, boolean]> = [
    ['a plain method is hidden', method('a'), {}, false],
    ['@RpcMcp shows it', method('a', { mcp: {} }), {}, true],
    ['exposeAll shows a plain method', method('a'), { exposeAll: true }, true],
    ['exclude beats include', method('a', { mcp: {} }), { include: ['a'], exclude: ['a'] }, false],
    ['include beats enabled: false', method('a', { mcp: { enabled: false } }), { include: ['a'] }, true],
    ['include beats excludePrefixes', method('admin.a'), { include: ['admin.a'], excludePrefixes: ['admin.'] }, true],
    ['include beats deprecation', method('a', { deprecated: true }), { include: ['a'] }, true],
    ['enabled: false hides under exposeAll', method('a', { mcp: { enabled: false } }), { exposeAll: true }, false],
    ['deprecated without @RpcMcp hides under exposeAll', method('a', { deprecated: true }), { exposeAll: true }, false],
    ['deprecated with @RpcMcp is shown', method('a', { deprecated: true, mcp: {} }), {}, true],
    ['excludePrefixes hides under exposeAll', method('admin.a'), { exposeAll: true, excludePrefixes: ['admin.'] }, false],
    ['excludePrefixes beats @RpcMcp', method('admin.a', { mcp: {} }), { excludePrefixes: ['admin.'] }, false],
    ['rpc.* is never a tool', method('rpc.discover', { mcp: {} }), { include: ['rpc.discover'] }, false],
  ];
  it.each(cases)('%s', (_label, definition, o, shown) => {
    expect(isExposedAsTool(definition, options(o))).toBe(shown);
  });
});

describe('McpToolCatalog', () => {
  const registry = new RpcMethodRegistry(
    [
      method('math.add', { mcp: { name: 'add', annotations: { destructiveHint: false } }, params: { type: 'object', properties: { a: { type: 'number' } } }, result: { $ref: '#/components/schemas/Sum' } }),
      method('report', { mcp: { annotations: { readOnlyHint: false } }, cache: true, result: { type: 'array' } }),
      method('admin.reset', { mcp: {} }),
    ],
    { Sum: { type: 'object', properties: { sum: { type: 'number' } } } },
  );
  const admin = new RpcAccessRule(['admin'], 'any', true);
  const catalog = McpToolCatalog.build(registry, options({}), (m) => (m === 'admin.reset' ? admin : undefined));

  it('renames a tool everywhere: the method name is then not a tool', () => {
    expect(catalog.find('add', [])?.definition.name).toBe('math.add');
    expect(catalog.find('math.add', [])).toBeUndefined();
  });

  it('inlines a result DTO as an object outputSchema; no outputSchema for a non-object result', () => {
    expect(catalog.find('add', [])!.tool.outputSchema).toEqual({ type: 'object', properties: { sum: { type: 'number' } } });
    expect(catalog.find('report', [])!.tool.outputSchema).toBeUndefined();
  });

  it('always gives inputSchema an object root with properties', () => {
    expect(catalog.find('report', [])!.tool.inputSchema).toEqual({ type: 'object', properties: {} });
  });

  it('@RpcCache implies readOnlyHint and idempotentHint unless set', () => {
    expect(catalog.find('report', [])!.tool.annotations).toEqual({ readOnlyHint: false, idempotentHint: true });
    expect(catalog.find('add', [])!.tool.annotations).toEqual({ destructiveHint: false });
  });

  it('lists and finds protected tools only for callers with the roles', () => {
    expect(catalog.list([]).map((t) => t.name)).toEqual(['add', 'report']);
    expect(catalog.list(['admin']).map((t) => t.name)).toEqual(['add', 'report', 'admin.reset']);
    expect(catalog.find('admin.reset', [])).toBeUndefined();
    expect(catalog.find('admin.reset', ['admin'])).toBeDefined();
    expect(Object.isFrozen(catalog.list(['admin']))).toBe(true);
  });
});
