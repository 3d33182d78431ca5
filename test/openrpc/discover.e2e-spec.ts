/**
 * Over real HTTP: `rpc.discover` is a normal call (batch, notification, params
 * checked), answers the document of the caller (methods and DTO schemas filtered by roles, as the
 * roles step decides them; `discoverable: false` hidden but callable), `GET /rpc/openrpc.json` is
 * the same call, the caller is who the app's guards say, disabled means -32601 / 404, and the
 * reserved name is not the app's to register.
 */
import { ClassSerializerInterceptor, ForbiddenException, Injectable, Logger, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { IsInt, IsString, Min } from 'class-validator';
import { JsonRpcModule, RpcMethod, type JsonRpcModuleOptions } from '@nest-jsonrpc/server';
import { OPENRPC_DOCUMENT_CACHE_SIZE } from '../../libs/server/src/openrpc/openrpc-documents.js';
import { RpcPipeline } from '../../libs/server/src/pipeline/rpc-pipeline.js';
import { ExplorerPageRoutes, pageHtml } from '../../libs/server/src/explorer/explorer-page-routes.js';
import { OpenRpcDiscovery } from '../../libs/server/src/openrpc/openrpc-discovery.js';
import { resolveJsonRpcOptions } from '../../libs/server/src/options/resolve-options.js';
import { validateOpenRpc } from '../../libs/server/src/openrpc/openrpc-validation.spec-support.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

class AddDto {
  @IsInt() a!: number;
  @IsInt() b!: number;
}
class SumResult {
  @IsInt() sum!: number;
}
/** Only `vault.open` uses it: a caller without the role must not find it anywhere. */
class VaultCombinationDto {
  @IsString() combination!: string;
  @IsInt() @Min(1) drawer!: number;
}
class VaultContentsResult {
  @IsString() secretDocumentTitle!: string;
}

@Injectable()
class Methods {
  @RpcMethod('math.add', { summary: 'Adds', tags: ['math'], result: SumResult })
  add(p: AddDto) {
    return { sum: p.a + p.b };
  }

  @RpcMethod('vault.open', { roles: ['keeper'], summary: 'Opens the vault', result: VaultContentsResult })
  open(p: VaultCombinationDto) {
    return { secretDocumentTitle: `drawer ${p.drawer}` };
  }

  @RpcMethod('internal.ping', { discoverable: false })
  ping() {
    return 'pong';
  }
}

/** The app's own auth: `X-Role: <role>` -> `request.user`, set by a global guard (not a hook). */
@Injectable()
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const role = request.headers['x-role'];
    if (role === 'banned') throw new ForbiddenException('Banned');
    if (typeof role === 'string') request.user = { id: 'u1', roles: [role] };
    return true;
  }
}

const INFO = { title: 'Discover test', version: '1.2.3' };

function appWith(options: JsonRpcModuleOptions, guard = true) {
  @Module({
    imports: [JsonRpcModule.forRoot(options)],
    providers: [Methods, ...(guard ? [{ provide: APP_GUARD, useClass: HeaderAuthGuard }] : [])],
  })
  class AppModule {}
  return AppModule;
}

const discover = (id: number | string = 1, params?: unknown) => ({ jsonrpc: '2.0', method: 'rpc.discover', id, ...(params === undefined ? {} : { params }) });

describe('rpc.discover and GET /rpc/openrpc.json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(appWith({ openrpc: { enabled: true, info: INFO } }));
  });
  afterAll(() => t?.close());

  it('answers a valid OpenRPC 1.3.2 document inside a batch, next to another call', async () => {
    const { status, body } = await t.rpc([discover(1), { jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 2 }]);
    expect(status).toBe(200);
    expect(body).toHaveLength(2);
    expect(body[1]).toEqual({ jsonrpc: '2.0', result: { sum: 5 }, id: 2 });
    const document = body[0].result;
    expect(body[0].id).toBe(1);
    expect(validateOpenRpc(document)).toBe(true);
    expect(document.openrpc).toBe('1.3.2');
    expect(document.info).toEqual(INFO);
    expect(document.servers).toEqual([{ name: 'default', url: `${t.url}/rpc` }]);
    expect(document.methods.map((m: { name: string }) => m.name)).toEqual(['math.add']);
    expect(document.methods[0]).toMatchObject({ summary: 'Adds', tags: [{ name: 'math' }], paramStructure: 'by-name', result: { schema: { $ref: '#/components/schemas/SumResult' } } });
    expect(Object.keys(document.components.schemas)).toEqual(['SumResult']);
  });

  it('a caller without a method\'s roles finds neither the method nor its DTO schemas anywhere; a caller with them does', async () => {
    const anonymous = JSON.stringify((await t.rpc(discover())).body.result);
    for (const hidden of ['vault.open', 'VaultCombinationDto', 'VaultContentsResult', 'combination', 'secretDocumentTitle', 'keeper']) {
      expect(anonymous).not.toContain(hidden);
    }
    const other = JSON.stringify((await t.rpc(discover(), { headers: { 'x-role': 'visitor' } })).body.result);
    expect(other).toBe(anonymous);

    const keeper = (await t.rpc(discover(), { headers: { 'x-role': 'keeper' } })).body.result;
    expect(validateOpenRpc(keeper)).toBe(true);
    expect(keeper.methods.map((m: { name: string }) => m.name)).toEqual(['math.add', 'vault.open']);
    const vault = keeper.methods[1];
    expect(vault.params.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([['combination', true], ['drawer', true]]);
    expect(vault.errors.map((e: { code: number }) => e.code)).toEqual([-32602, -32001]);
    expect(keeper.components.schemas.VaultContentsResult).toBeDefined();
    // Which role opens the vault is policy, never written.
    expect(JSON.stringify(keeper)).not.toContain('keeper');
  });

  it('takes no params: {} and [] are fine, anything else is -32602', async () => {
    expect((await t.rpc(discover(1, {}))).body.result.openrpc).toBe('1.3.2');
    expect((await t.rpc(discover(1, []))).body.result.openrpc).toBe('1.3.2');
    const named = (await t.rpc(discover(1, { verbose: true }))).body;
    expect(named.error).toMatchObject({ code: -32602, data: [{ path: 'verbose', message: 'Unknown parameter', code: null }] });
    expect((await t.rpc(discover(1, [1]))).body.error.code).toBe(-32602);
  });

  it('is fine as a notification (204, nothing answered)', async () => {
    const res = await t.post({ jsonrpc: '2.0', method: 'rpc.discover' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });

  it('discoverable: false hides a method that stays callable', async () => {
    const text = JSON.stringify((await t.rpc(discover(), { headers: { 'x-role': 'keeper' } })).body.result);
    expect(text).not.toContain('internal.ping');
    expect((await t.rpc({ jsonrpc: '2.0', method: 'internal.ping', id: 9 })).body).toEqual({ jsonrpc: '2.0', result: 'pong', id: 9 });
  });

  it('GET /rpc/openrpc.json is the same document for the same caller, decided by the app\'s guards as on /rpc', async () => {
    for (const headers of [{}, { 'x-role': 'keeper' }] as Array<Record<string, string>>) {
      const res = await fetch(`${t.url}/rpc/openrpc.json`, { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const text = await res.text();
      const viaRpc = (await t.rpc(discover(), { headers })).body.result;
      expect(JSON.parse(text)).toEqual(viaRpc);
    }
    const keeper = await (await fetch(`${t.url}/rpc/openrpc.json`, { headers: { 'x-role': 'keeper' } })).json();
    expect(keeper.methods.map((m: { name: string }) => m.name)).toContain('vault.open');
  });

  it('a caller the app\'s guards refuse gets -32001 on /rpc, and 403 with the error envelope on GET', async () => {
    const headers = { 'x-role': 'banned' };
    expect((await t.rpc(discover(), { headers })).body.error).toEqual({ code: -32001, message: 'Banned' });
    const res = await fetch(`${t.url}/rpc/openrpc.json`, { headers });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Banned' }, id: null });
  });

  it('a transport that wants a value (a tool call) gets the document itself, the same as /rpc answers', async () => {
    const { RpcHttpExchange } = await import('../../libs/server/src/context/rpc-context.js');
    const pipeline = t.app.get(RpcPipeline);
    const request = { headers: { host: new URL(t.url).host }, protocol: 'http', host: new URL(t.url).host, raw: {} } as never;
    const platform = { rawRequest: (r: { raw: unknown }) => r.raw, rawResponse: (r: { raw: unknown }) => r.raw } as never;
    const exchange = new RpcHttpExchange(platform, request, { raw: {} } as never, 'r1', '/tool', undefined);
    const value = await pipeline.run(pipeline.callOf('rpc.discover', undefined, exchange, 'tool')!);
    expect(value).toEqual((await t.rpc(discover())).body.result);
  });

  it('servers[0].url follows the Host the request used; a Host unfit for a URL becomes localhost', async () => {
    const port = new URL(t.url).port;
    const viaLocalhost = await (await fetch(`http://localhost:${port}/rpc/openrpc.json`).catch(() => fetch(`${t.url}/rpc/openrpc.json`))).json();
    expect(viaLocalhost.servers[0].url).toMatch(/^http:\/\/(localhost|127\.0\.0\.1):\d+\/rpc$/);
    const { request } = await import('node:http');
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/rpc/openrpc.json', headers: { host: 'evil"host<x>' } }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve(data));
      });
      req.on('error', reject);
      req.end();
    });
    const document = JSON.parse(body);
    expect(document.servers[0].url).toBe('http://localhost/rpc');
    expect(validateOpenRpc(document)).toBe(true);
  });

  it('serialises once per server URL and visible method set, and keeps at most OPENRPC_DOCUMENT_CACHE_SIZE documents', () => {
    const documents = t.app.get(OpenRpcDiscovery).catalog();
    const url = `${t.url}/rpc`;
    const first = documents.forCaller([], url);
    expect(documents.forCaller(['visitor', 'other'], url)).toBe(first); // sees the same methods: same document
    expect(documents.forCaller(['keeper'], url)).not.toBe(first);
    for (let i = 0; i < OPENRPC_DOCUMENT_CACHE_SIZE + 50; i++) documents.forCaller([], `http://host-${i}.example/rpc`);
    expect((documents as unknown as { cache: Map<string, unknown> }).cache.size).toBe(OPENRPC_DOCUMENT_CACHE_SIZE);
  });
});

describe("rpc.discover under the app's global interceptors", () => {
  it('with ClassSerializerInterceptor (Nest’s serialization recipe) app-wide, /rpc and GET answer the document, not its serialised form', async () => {
    const t = await startTestApp(appWith({ openrpc: { enabled: true, info: INFO } }, false), (app) => {
      app.useGlobalInterceptors(new ClassSerializerInterceptor(app.get(Reflector)));
    });
    try {
      const { body } = await t.rpc(discover());
      expect(validateOpenRpc(body.result)).toBe(true);
      expect(body.result.info).toEqual(INFO);
      const res = await fetch(`${t.url}/rpc/openrpc.json`);
      expect(res.status).toBe(200);
      const document = await res.json();
      expect(validateOpenRpc(document)).toBe(true);
      expect(document.methods.map((m: { name: string }) => m.name)).toEqual(['math.add']);
    } finally {
      await t.close();
    }
  });
});

describe('rpc.discover options', () => {
  it('disabled (the default): rpc.discover is -32601 and GET /rpc/openrpc.json 404', async () => {
    const t = await startTestApp(appWith({}));
    try {
      expect((await t.rpc(discover())).body.error).toEqual({ code: -32601, message: 'Method not found' });
      expect((await fetch(`${t.url}/rpc/openrpc.json`)).status).toBe(404);
      expect((await t.rpc({ jsonrpc: '2.0', method: 'math.add', params: { a: 1, b: 1 }, id: 1 })).body.result).toEqual({ sum: 2 });
    } finally {
      await t.close();
    }
  });

  it('serverUrl and path from the options', async () => {
    const t = await startTestApp(appWith({ openrpc: { enabled: true, info: INFO, path: '/api/openrpc.json', serverUrl: 'https://api.example.com/rpc' } }, false));
    try {
      const res = await fetch(`${t.url}/api/openrpc.json`);
      expect(res.status).toBe(200);
      const document = await res.json();
      expect(document.servers).toEqual([{ name: 'default', url: 'https://api.example.com/rpc' }]);
      expect(document).toEqual((await t.rpc(discover())).body.result);
      expect((await fetch(`${t.url}/rpc/openrpc.json`)).status).toBe(404);
    } finally {
      await t.close();
    }
  });

  it('forRootAsync: the options decide when they are known', async () => {
    @Module({
      imports: [JsonRpcModule.forRootAsync({ useFactory: async () => ({ openrpc: { enabled: true, info: INFO } }) })],
      providers: [Methods],
    })
    class AsyncModule {}
    const t = await startTestApp(AsyncModule);
    try {
      expect((await t.rpc(discover())).body.result.methods.map((m: { name: string }) => m.name)).toEqual(['math.add']);
    } finally {
      await t.close();
    }
  });

  it('the explorer at another path: its links point at its assets and at the document', async () => {
    const t = await startTestApp(appWith({ openrpc: { enabled: true, info: INFO, path: '/api/openrpc.json' }, explorer: { enabled: true, path: '/docs/api' } }, false));
    try {
      const html = await (await fetch(`${t.url}/docs/api`)).text();
      expect(html).toContain('<meta name="openrpc-document" content="/api/openrpc.json" />');
      expect(html).toContain('href="/docs/api/explorer.css"');
      expect(html).toContain('src="/docs/api/explorer.js"');
      expect((await fetch(`${t.url}/docs/api/explorer.js`)).status).toBe(200);
      expect((await fetch(`${t.url}/rpc/explorer`)).status).toBe(404);
    } finally {
      await t.close();
    }
  });

  it('the explorer without its built page fails startup with a message', () => {
    const options = resolveJsonRpcOptions({ openrpc: { enabled: true, info: INFO }, explorer: { enabled: true } });
    expect(() => new ExplorerPageRoutes(options, new Logger(), '')).toThrow('the explorer page is not built');
    expect(() => pageHtml('<html></html>', '/x', '/openrpc.json')).toThrow('the built explorer page has no');
  });

  it('the app cannot register a reserved rpc. name, whether OpenRPC is on or off', async () => {
    @Injectable()
    class Squatter {
      @RpcMethod('rpc.discover') mine() {
        return 'mine';
      }
    }
    for (const options of [{}, { openrpc: { enabled: true, info: INFO } }]) {
      @Module({ imports: [JsonRpcModule.forRoot(options)], providers: [Squatter] })
      class SquatModule {}
      await expect(startTestApp(SquatModule)).rejects.toThrow('Squatter.mine: method name "rpc.discover" is reserved');
    }
  });
});
