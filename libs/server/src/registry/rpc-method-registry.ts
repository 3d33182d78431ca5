import type { JsonSchemaObject } from '../schema/index.js';
import type { RpcMethodDefinition } from './rpc-method-definition.js';

/** The frozen name -> method table, built once at bootstrap. */
export class RpcMethodRegistry {
  private readonly methods: ReadonlyMap<string, RpcMethodDefinition>;

  /** @internal */
  constructor(
    definitions: readonly RpcMethodDefinition[],
    /** @internal The named schemas (DTO classes) the methods' schemas reference with `$ref`. */
    readonly components: Readonly<Record<string, JsonSchemaObject>> = Object.freeze({}),
  ) {
    this.methods = new Map(definitions.map((d) => [d.name, Object.freeze(d)]));
  }

  get(name: string): RpcMethodDefinition | undefined {
    return this.methods.get(name);
  }

  all(): IterableIterator<RpcMethodDefinition> {
    return this.methods.values();
  }

  get size(): number {
    return this.methods.size;
  }
}
