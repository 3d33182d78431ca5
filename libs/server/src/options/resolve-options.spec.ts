import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { JsonRpcModuleOptions } from './json-rpc-options.js';
import { resolveJsonRpcOptions } from './resolve-options.js';

const problemsOf = (options: JsonRpcModuleOptions): string[] => {
  try {
    resolveJsonRpcOptions(options);
    return [];
  } catch (error) {
    return (error as Error).message.split('\n').slice(1).map((line) => line.replace(/^ {2}- /, ''));
  }
};

/** Every route option, written as an options object holding `path` there. */
const ROUTES: Record<string, (path: string) => JsonRpcModuleOptions> = {
  path: (path) => ({ path }),
  'stream.path': (path) => ({ stream: { path } }),
  'durable.path': (path) => ({ durable: { path } }),
  'mcp.path': (path) => ({ mcp: { path } }),
  'openrpc.path': (path) => ({ openrpc: { path } }),
  'explorer.path': (path) => ({ explorer: { path } }),
};

describe('module options', () => {
  it.each(Object.keys(ROUTES))('check %s by the one route rule', (name) => {
    for (const bad of ['rpc', '/rpc/', '/rpc/:id', '/rpc/*', '/rpc?x', '/rpc#x', '/my rpc', 42]) {
      expect(problemsOf(ROUTES[name](bad as string))).toEqual([
        `"${name}" must be a string starting with "/", without a trailing "/", spaces or route wildcards, got ${JSON.stringify(bad)}`,
      ]);
    }
    for (const good of ['/', '/api/v2/jsonrpc']) {
      // durable and MCP build their routes below theirs (`<path>/:id`, `<path>/tools`): '/' would give '//…'.
      const below = name === 'durable.path' || name === 'mcp.path';
      expect(problemsOf(ROUTES[name](good))).toEqual(below && good === '/' ? [`"${name}" must not be "/": routes are built below it`] : []);
    }
  });

  it('report unknown keys of every section before any other problem', () => {
    const sections = ['security', 'stream', 'httpStatus', 'params', 'durable', 'limits', 'mcp', 'observability', 'openrpc', 'explorer'] as const;
    const options = Object.fromEntries(sections.map((name) => [name, { typo: 1 }]));
    expect(problemsOf({ ...options, maxBatchSize: 0, typo: 1 } as never)).toEqual([
      'unknown option "typo"',
      ...sections.map((name) => `unknown option "${name}.typo"`),
      '"maxBatchSize" must be an integer >= 1, got 0',
    ]);
  });

  it('report a section that is not an object, and resolve it to its defaults', () => {
    expect(problemsOf({ limits: 5, observability: [] } as never)).toEqual(['"limits" must be an object', '"observability" must be an object']);
  });

  it('fill every default, copying (never freezing) the lists the app gives', () => {
    const include = ['a.b'];
    const o = resolveJsonRpcOptions({ mcp: { include }, stream: { keepAliveMs: 500 } });
    expect(o.mcp.include).toEqual(['a.b']);
    expect(Object.isFrozen(o.mcp.include)).toBe(true);
    expect(Object.isFrozen(include)).toBe(false);
    expect(o.limits).toEqual({ lingerMs: 5_000, lingerBytes: 16 * 1_048_576, bodyTimeoutMs: 30_000, stalledWriteMs: 30_000 });
    expect(o.observability).toEqual({ tracing: true, metrics: true, events: true, logCalls: 'errors' });
    // durable.keepAliveMs has no default of its own: it is stream.keepAliveMs unless given.
    expect(o.durable.keepAliveMs).toBe(500);
    expect(resolveJsonRpcOptions({ durable: { keepAliveMs: 100 } }).durable.keepAliveMs).toBe(100);
  });

  describe('the routes below `path`', () => {
    const routes = (options: JsonRpcModuleOptions) => {
      const o = resolveJsonRpcOptions(options);
      return { rpc: o.path, stream: o.stream.path, durable: o.durable.path, openrpc: o.openrpc.path, explorer: o.explorer.path, mcp: o.mcp.path };
    };

    it('are the default ones when `path` is not given', () => {
      expect(routes({})).toEqual(DEFAULT_PATHS);
      expect(routes({ path: DEFAULT_PATHS.rpc })).toEqual(DEFAULT_PATHS);
    });

    it('move with `path`; `mcp.path` does not', () => {
      expect(routes({ path: '/api/rpc' })).toEqual({
        rpc: '/api/rpc',
        stream: '/api/rpc/stream',
        durable: '/api/rpc/streams',
        openrpc: '/api/rpc/openrpc.json',
        explorer: '/api/rpc/explorer',
        mcp: '/mcp',
      });
    });

    it('are what the app gives when it gives them, the others still below `path`', () => {
      expect(routes({ path: '/api/rpc', stream: { path: '/s' } })).toEqual({
        rpc: '/api/rpc',
        stream: '/s',
        durable: '/api/rpc/streams',
        openrpc: '/api/rpc/openrpc.json',
        explorer: '/api/rpc/explorer',
        mcp: '/mcp',
      });
      expect(routes({ path: '/api/rpc', durable: { path: '/d' }, openrpc: { path: '/doc.json' }, explorer: { path: '/x' } })).toMatchObject({ durable: '/d', openrpc: '/doc.json', explorer: '/x' });
    });

    it('below `/` are one slash deep', () => {
      expect(routes({ path: '/' })).toEqual({ rpc: '/', stream: '/stream', durable: '/streams', openrpc: '/openrpc.json', explorer: '/explorer', mcp: '/mcp' });
    });

    it('are checked as given: an invalid `path` is the one problem, with every route enabled', () => {
      const enabled = { stream: { enabled: true }, durable: { enabled: true }, openrpc: { enabled: true, info: { title: 't', version: '1' } }, explorer: { enabled: true } };
      expect(problemsOf({ path: 'api/', ...enabled })).toEqual(['"path" must be a string starting with "/", without a trailing "/", spaces or route wildcards, got "api/"']);
      expect(problemsOf({ path: '/api', ...enabled })).toEqual([]);
    });

    it('refuse a given route that meets a moved one', () => {
      const both = { durable: { enabled: true } };
      expect(problemsOf({ path: '/x', stream: { enabled: true, path: '/x/streams' }, ...both })).toEqual(['"durable.path" (/x/streams) is already a route of the module']);
      expect(problemsOf({ path: '/x', durable: { enabled: true, path: '/x' } })).toEqual(['"durable.path" (/x) is already a route of the module']);
      // Disabled, the stream route is not served: nothing meets.
      expect(problemsOf({ path: '/x', stream: { path: '/x/streams' }, ...both })).toEqual([]);
    });
  });
});
