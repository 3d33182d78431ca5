import { resolveJsonRpcOptions } from './resolve-options.js';

const problemsOf = (options: Parameters<typeof resolveJsonRpcOptions>[0]): string => {
  try {
    resolveJsonRpcOptions(options);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('openrpc and explorer options', () => {
  it('are off by default, on the default routes', () => {
    const o = resolveJsonRpcOptions({});
    expect(o.openrpc).toEqual({ enabled: false, path: '/rpc/openrpc.json', info: { title: '', version: '' }, serverUrl: undefined });
    expect(o.explorer).toEqual({ enabled: false, path: '/rpc/explorer' });
  });

  it('resolve a full configuration, copying (never freezing) the app\'s info', () => {
    const info = { title: 'Billing', version: '2.1.0', description: 'd', license: { name: 'MIT' }, contact: { email: 'a@b.co' } };
    const o = resolveJsonRpcOptions({ openrpc: { enabled: true, info, path: '/api/openrpc.json', serverUrl: 'https://api.example.com/rpc' }, explorer: { enabled: true, path: '/docs' } });
    expect(o.openrpc).toEqual({ enabled: true, path: '/api/openrpc.json', info, serverUrl: 'https://api.example.com/rpc' });
    expect(o.explorer).toEqual({ enabled: true, path: '/docs' });
    expect(Object.isFrozen(info)).toBe(false);
  });

  it('fail startup with every problem named', () => {
    expect(problemsOf({ openrpc: { enabled: true } })).toContain('"openrpc.info" is required when OpenRPC is enabled');
    const message = problemsOf({
      openrpc: { enabled: 'yes' as never, path: 'openrpc.json', info: { title: '', version: 1 as never, colour: 'red' } as never, serverUrl: '/rpc', extra: 1 } as never,
      explorer: { enabled: true, path: '/rpc/:x', theme: 'dark' } as never,
    });
    for (const expected of [
      'unknown option "openrpc.extra"',
      'unknown option "explorer.theme"',
      '"openrpc.enabled" must be a boolean',
      '"openrpc.path" must be a string starting with "/"',
      'unknown option "openrpc.info.colour"',
      '"openrpc.info.title" must be a non-empty string',
      '"openrpc.info.version" must be a non-empty string',
      '"openrpc.serverUrl" must be an absolute http(s) URL',
      '"explorer.path" must be a string starting with "/"',
      '"explorer.enabled" needs the OpenRPC document the page reads',
    ]) {
      expect(message).toContain(expected);
    }
  });

  it('check info.contact and info.license as sections of their own', () => {
    const info = { title: 't', version: '1' };
    expect(problemsOf({ openrpc: { enabled: true, info: { ...info, license: 'MIT' as never } } })).toBe('JsonRpcModule: invalid options:\n  - "openrpc.info.license" must be an object');
    expect(problemsOf({ openrpc: { enabled: true, info: { ...info, license: { url: 'u' } as never, contact: { phone: 1 } as never } } })).toBe(
      'JsonRpcModule: invalid options:\n  - unknown option "openrpc.info.contact.phone"\n  - "openrpc.info.license.name" must be a non-empty string',
    );
    const o = resolveJsonRpcOptions({ openrpc: { enabled: true, info } });
    expect(Object.keys(o.openrpc.info)).toEqual(['title', 'version']);
  });

  it('refuse routes the module already serves', () => {
    const info = { title: 't', version: '1' };
    expect(problemsOf({ openrpc: { enabled: true, info, path: '/rpc' } })).toContain('"openrpc.path" (/rpc) is already a route of the module');
    expect(problemsOf({ stream: { enabled: true }, openrpc: { enabled: true, info }, explorer: { enabled: true, path: '/rpc/stream' } })).toContain(
      '"explorer.path" (/rpc/stream) is already a route of the module',
    );
    expect(problemsOf({ openrpc: { enabled: true, info }, explorer: { enabled: true, path: '/rpc/openrpc.json' } })).toContain('"explorer.path" (/rpc/openrpc.json)');
    expect(problemsOf({ openrpc: { enabled: true, info }, explorer: { enabled: true } })).toBe('');
  });
});
