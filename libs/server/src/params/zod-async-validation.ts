import type { StandardSchemaV1 } from '../decorators/standard-schema.js';

type Result = StandardSchemaV1.Result<unknown>;

/** What zod's `safeParseAsync` answers (zod 4, classic and mini alike). */
interface ZodSafeParseResult {
  readonly success: boolean;
  readonly data?: unknown;
  readonly error?: { readonly issues: ReadonlyArray<StandardSchemaV1.Issue> };
}

interface ZodNode {
  readonly _zod: { readonly def: Record<string, unknown> };
}

/**
 * zod's own asynchronous validation of `schema`, for a zod schema with async work, or undefined
 * for anything else.
 *
 * Why: zod 4.6 answers `~standard.validate` for such a schema by first walking it synchronously,
 * abandoning the promises its async refinements return there, then walking it again
 * asynchronously. Each refinement so runs twice per call, and one that rejects (a lookup that
 * fails) rejects once unhandled, which ends a Node process. `safeParseAsync` walks only once.
 */
export function zodAsyncValidation(schema: StandardSchemaV1, vendor: string): ((value: unknown) => Promise<Result>) | undefined {
  const parse = (schema as { safeParseAsync?: unknown }).safeParseAsync;
  if (vendor !== 'zod' || typeof parse !== 'function') return undefined;
  return (value) =>
    (parse.call(schema, value) as Promise<ZodSafeParseResult>).then((r) => (r.success ? { value: r.data } : { issues: r.error?.issues ?? [] }));
}

/**
 * Whether a zod schema declares async work: a refinement or transform written as an `async`
 * function, anywhere inside it (`z.lazy` included). One that returns a Promise from a plain
 * function is learnt on its first asynchronous answer instead.
 */
export function declaresZodAsyncWork(schema: unknown): boolean {
  const seen = new Set<unknown>();
  const stack: unknown[] = [schema];
  while (stack.length) {
    const node = stack.pop();
    if (!isZodNode(node) || seen.has(node)) continue;
    seen.add(node);
    for (const [key, value] of Object.entries(node._zod.def)) {
      if (typeof value === 'function') {
        if (value.constructor?.name === 'AsyncFunction') return true;
        if (key === 'getter') stack.push(lazyTarget(value as () => unknown));
      } else if (Array.isArray(value)) stack.push(...value);
      else if (value !== null && typeof value === 'object') stack.push(...(isZodNode(value) ? [value] : Object.values(value)));
    }
  }
  return false;
}

function isZodNode(value: unknown): value is ZodNode {
  const internals = value !== null && (typeof value === 'object' || typeof value === 'function') ? (value as { _zod?: { def?: unknown } })._zod : undefined;
  return internals !== undefined && internals !== null && typeof internals.def === 'object' && internals.def !== null;
}

/** What a `z.lazy` getter returns (zod calls it the same way); nothing when it throws. */
function lazyTarget(getter: () => unknown): unknown {
  try {
    return getter();
  } catch {
    return undefined;
  }
}
