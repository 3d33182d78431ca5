/**
 * The registry builds every method's schemas at startup from what the app
 * already declares (DTOs, @RpcParam, @RpcMethod options, @RpcStream row), once, frozen.
 */
import { Injectable, Module } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsEmail, IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { JsonRpcModule, JsonRpcServer, RpcCtx, RpcMethod, RpcParam, RpcParams, RpcStream, type RpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

class Address {
  @IsString() city!: string;
}

class UpdateUser {
  @IsInt() @Min(1) id!: number;
  @IsEmail() email!: string;
  @IsOptional() @IsInt() @Max(150) age?: number;
  @ValidateNested() @Type(() => Address) address!: Address;
}

class Sum {
  @IsInt() sum!: number;
}

class Row {
  @IsString() delta!: string;
}

@Injectable()
class Methods {
  @RpcMethod('user.update', { result: Sum }) update(@RpcParams() dto: UpdateUser) { return { sum: dto.id }; }
  @RpcMethod('math.subtract') subtract(@RpcParam('minuend') a: number, @RpcParam('subtrahend', { default: 0 }) b: number) { return a - b; }
  @RpcMethod('ping') ping() { return 'pong'; }
  @RpcMethod('raw') raw(params: unknown, ctx: RpcContext) { return [params, ctx.method]; }
  @RpcMethod('explicit', { params: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }) explicit(@RpcCtx() ctx: RpcContext) { return ctx.params; }
  @RpcMethod('chat') @RpcStream({ row: Row }) async *chat() { yield { delta: 'x' }; }
}

describe('method schemas built by the registry at startup', () => {
  let t: TestApp;
  beforeAll(async () => {
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [Methods] })
    class AppModule {}
    t = await startTestApp(AppModule);
  });
  afterAll(() => t.close());
  const schemasOf = (name: string) => t.app.get(JsonRpcServer).registry.get(name)!.schemas;

  it('a DTO method: one descriptor per property, nested DTOs as referenced components, the result class too', () => {
    const s = schemasOf('user.update');
    expect(s.params.structure).toBe('by-name');
    // @ValidateNested alone lets a missing value through, so the schema does not require it either.
    expect(s.params.descriptors.map((d) => [d.name, d.required])).toEqual([['id', true], ['email', true], ['age', false], ['address', false]]);
    expect(s.params.descriptors[0].schema).toMatchObject({ type: 'integer', minimum: 1 });
    expect(s.params.descriptors[1].schema).toMatchObject({ type: 'string', format: 'email' });
    expect(JSON.stringify(s.params.descriptors[3].schema)).toContain('#/components/schemas/Address');
    expect(JSON.stringify(s.result)).toContain('#/components/schemas/Sum');
    const components = t.app.get(JsonRpcServer).registry.components;
    expect(components.Address).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('@RpcParam methods take positional params too: "either", each param with its type; a default makes it optional', () => {
    const s = schemasOf('math.subtract');
    expect(s.params.structure).toBe('either');
    expect(s.params.descriptors).toEqual([
      { name: 'minuend', required: true, schema: { type: 'number' } },
      expect.objectContaining({ name: 'subtrahend', required: false }),
    ]);
  });

  it('no parameter: no params; raw params: anything; an explicit params schema wins; a stream has its row schema', () => {
    expect(schemasOf('ping').params.descriptors).toEqual([]);
    expect(schemasOf('ping').params.schema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(schemasOf('raw').params.schema).toEqual({});
    expect(schemasOf('explicit').params.schema).toMatchObject({ properties: { q: { type: 'string' } }, required: ['q'] });
    expect(JSON.stringify(schemasOf('chat').row)).toContain('#/components/schemas/Row');
  });
});
