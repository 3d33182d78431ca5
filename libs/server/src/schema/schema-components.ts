import { componentRef, deepFreeze, type ClassRef, type JsonSchemaObject } from './json-schema.js';

/** Whether a class's schema rejects properties it does not declare (`params.rejectUnknown`). */
export type ClassSchemaVariant = 'closed' | 'open';

/**
 * The named schemas every method shares: one per (class, variant), named after the class, and one
 * per definition a Standard Schema library gave (`adopt`), named after its key.
 * Two different classes with one name get `Name`, `Name_2`, ...; the second variant of one class
 * gets `Name_open` / `Name_closed` (a class used both with and without `rejectUnknown`).
 * A name is reserved before the class is converted, so self-referencing DTOs (trees) terminate.
 */
export class SchemaComponents {
  private readonly names = new Map<ClassRef, Partial<Record<ClassSchemaVariant, string>>>();
  private readonly taken = new Set<string>();
  private readonly schemas = new Map<string, JsonSchemaObject>();
  /** Adopted definitions by signature (their content with everything they reach). */
  private readonly adopted = new Map<string, string>();
  /** Which side of its schema each adopted name describes. */
  private readonly adoptedSides = new Map<string, 'input' | 'output'>();

  constructor(private readonly convert: (cls: ClassRef, variant: ClassSchemaVariant) => JsonSchemaObject) {}

  /** `{ $ref }` to the class's component, converting the class the first time it is seen. */
  refTo(cls: ClassRef, variant: ClassSchemaVariant): JsonSchemaObject {
    return componentRef(this.nameOf(cls, variant));
  }

  /** The component name of the class, converting it the first time it is seen. */
  nameOf(cls: ClassRef, variant: ClassSchemaVariant): string {
    let variants = this.names.get(cls);
    const known = variants?.[variant];
    if (known !== undefined) return known;
    if (!variants) this.names.set(cls, (variants = {}));
    const other = Object.values(variants)[0];
    const name = this.unique(other === undefined ? safeName(cls.name) : `${other}_${variant}`);
    variants[variant] = name;
    this.taken.add(name);
    this.schemas.set(name, deepFreeze(this.convert(cls, variant)));
    return name;
  }

  /**
   * The component name of a library's definition: the one already adopted with this signature, or
   * a new name from `key` (`fresh`: the caller then `define`s its content). A key the other side
   * of a schema took (zod closes an object on its output side) gets the side (`Address_output`);
   * a key taken otherwise is numbered (`Address_2`).
   */
  adopt(key: string, side: 'input' | 'output', signature: string): { name: string; fresh: boolean } {
    const known = this.adopted.get(signature);
    if (known !== undefined) return { name: known, fresh: false };
    const base = safeName(key);
    const otherSide = this.adoptedSides.get(base);
    const name = this.unique(otherSide !== undefined && otherSide !== side ? `${base}_${side}` : base);
    this.taken.add(name);
    this.adopted.set(signature, name);
    this.adoptedSides.set(name, side);
    return { name, fresh: true };
  }

  /** Sets the content of a name `adopt` handed out. */
  define(name: string, schema: JsonSchemaObject): void {
    this.schemas.set(name, deepFreeze(schema));
  }

  /** Every component built so far, by name (frozen). */
  all(): Readonly<Record<string, JsonSchemaObject>> {
    return Object.freeze(Object.fromEntries(this.schemas));
  }

  get(name: string): JsonSchemaObject | undefined {
    return this.schemas.get(name);
  }

  private unique(base: string): string {
    if (!this.taken.has(base)) return base;
    let n = 2;
    while (this.taken.has(`${base}_${n}`)) n++;
    return `${base}_${n}`;
  }
}

/** OpenRPC component keys match `[0-z]+`; anonymous classes get a placeholder name. */
function safeName(name: string): string {
  const cleaned = name.replace(/[^0-9A-Za-z_]/g, '_');
  return cleaned === '' ? 'Anonymous' : cleaned;
}
