import type { Logger } from '@nestjs/common';
import type { ParamsShape } from '../params/param-plan.js';
import { MethodSchemaBuilder, type JsonSchemaObject, type MethodSchemas, type ParamsSource, type SchemaFailure } from '../schema/index.js';
import type { RpcMethodDefinition } from './rpc-method-definition.js';

/** A definition before its schemas are built (they are built for all methods at once). */
export type RpcMethodDraft = Omit<RpcMethodDefinition, 'schemas'>;

/**
 * Builds every method's params, result and row schemas once, at startup, sharing one set of named
 * components (DTO classes, and the definitions of Standard Schemas). What a DTO cannot express is
 * logged once (a warning, never a failure) and left permissive; a Standard Schema that cannot be
 * described is one of `failures` (the registry refuses to start).
 */
export function describeMethods(
  drafts: readonly RpcMethodDraft[],
  rejectUnknownByDefault: boolean,
  logger: Pick<Logger, 'warn'>,
): { definitions: RpcMethodDefinition[]; components: Readonly<Record<string, JsonSchemaObject>>; failures: readonly SchemaFailure[] } {
  const builder = new MethodSchemaBuilder({ onProblem: (p) => logger.warn(`Schema of ${p.where}: ${p.message} (described as anything)`) });
  const definitions = drafts.map((draft): RpcMethodDefinition => {
    const { options } = draft;
    const rejectUnknown = options.rejectUnknown ?? rejectUnknownByDefault;
    const schemas: MethodSchemas = builder.describe(draft.name, {
      params: paramsSource(options.params, draft.paramPlan.shape, rejectUnknown),
      result: options.result,
      resultJsonSchema: options.jsonSchema?.result,
      row: draft.stream?.row,
      rowJsonSchema: draft.stream?.jsonSchema?.row,
    });
    return { ...draft, schemas };
  });
  return { definitions, components: builder.components(), failures: builder.failures() };
}

/**
 * A Standard Schema of the params (the method's or `@RpcParams({ schema })`'s, which the param plan
 * found) or an explicit JSON Schema `params` wins; otherwise the param plan says what the handler takes.
 */
function paramsSource(explicit: RpcMethodDefinition['options']['params'], shape: ParamsShape, rejectUnknown: boolean): ParamsSource {
  if (shape.kind === 'schema') return { kind: 'standard', schema: shape.schema, jsonSchema: shape.jsonSchema };
  if (explicit !== undefined) return typeof explicit === 'object' ? { kind: 'schema', schema: explicit as JsonSchemaObject } : { kind: 'any' };
  switch (shape.kind) {
    case 'dto':
      return { kind: 'dto', dtoClass: shape.dtoClass, positional: shape.positional, rejectUnknown };
    case 'named':
      return {
        kind: 'named',
        rejectUnknown,
        params: shape.params.map(({ name, type, optional, hasDefault, defaultValue, schema, jsonSchema }) => ({
          name,
          type,
          optional: optional || hasDefault,
          ...(hasDefault && { default: defaultValue }),
          ...(schema !== undefined && { schema, jsonSchema }),
        })),
      };
    case 'none':
      return { kind: 'none' };
    default:
      return { kind: 'any' };
  }
}
