import type { Logger } from '@nestjs/common';
import type { ParamsShape } from '../params/param-plan.js';
import { MethodSchemaBuilder, type JsonSchemaObject, type MethodSchemas, type ParamsSource } from '../schema/index.js';
import type { RpcMethodDefinition } from './rpc-method-definition.js';

/** A definition before its schemas are built (they are built for all methods at once). */
export type RpcMethodDraft = Omit<RpcMethodDefinition, 'schemas'>;

/**
 * Builds every method's params, result and row schemas once, at startup, sharing one set of named
 * components (DTO classes). What a DTO cannot express is logged once (a warning, never a
 * failure) and left permissive.
 */
export function describeMethods(
  drafts: readonly RpcMethodDraft[],
  rejectUnknownByDefault: boolean,
  logger: Pick<Logger, 'warn'>,
): { definitions: RpcMethodDefinition[]; components: Readonly<Record<string, JsonSchemaObject>> } {
  const builder = new MethodSchemaBuilder({ onProblem: (p) => logger.warn(`Schema of ${p.where}: ${p.message} (described as anything)`) });
  const definitions = drafts.map((draft): RpcMethodDefinition => {
    const rejectUnknown = draft.options.rejectUnknown ?? rejectUnknownByDefault;
    const schemas: MethodSchemas = builder.describe(draft.name, {
      params: paramsSource(draft.options.params, draft.paramPlan.shape, rejectUnknown),
      result: draft.options.result,
      row: draft.stream?.row,
    });
    return { ...draft, schemas };
  });
  return { definitions, components: builder.components() };
}

/** An explicit `@RpcMethod({ params })` schema wins; otherwise the param plan says what the handler takes. */
function paramsSource(explicit: RpcMethodDefinition['options']['params'], shape: ParamsShape, rejectUnknown: boolean): ParamsSource {
  if (explicit !== undefined) return typeof explicit === 'object' ? { kind: 'schema', schema: explicit } : { kind: 'any' };
  switch (shape.kind) {
    case 'dto':
      return { kind: 'dto', dtoClass: shape.dtoClass, positional: shape.positional, rejectUnknown };
    case 'named':
      return {
        kind: 'named',
        rejectUnknown,
        params: shape.params.map((p) => (p.hasDefault ? { name: p.name, type: p.type, optional: true, default: p.defaultValue } : { name: p.name, type: p.type, optional: p.optional })),
      };
    case 'none':
      return { kind: 'none' };
    default:
      return { kind: 'any' };
  }
}
