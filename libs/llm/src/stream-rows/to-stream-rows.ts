/**
 * Maps adapter or tool-loop events to the rows an `@RpcStream` handler yields: text as `{ delta }`
 * (the row chat UIs already read), everything else as a row with a `type`. Raw provider events
 * are dropped. Rows are plain JSON, ready for NDJSON, SSE or a JSON array.
 */
import type { LlmFinishReason, LlmRawEvent, LlmToolLoopEvent, LlmUsage } from '../model/events.js';

/** A piece of the answer. */
export interface LlmDeltaRow {
  delta: string;
}

/** A piece of the model's reasoning (left out with `{ reasoning: false }`). */
export interface LlmReasoningRow {
  type: 'reasoning';
  delta: string;
}

/** A complete tool call the model made (`error` and `rawArguments` when its JSON did not parse). */
export interface LlmToolCallRow {
  type: 'tool-call';
  id: string;
  name: string;
  arguments?: unknown;
  rawArguments?: string;
  error?: string;
}

/** The outcome of a tool the loop ran. */
export interface LlmToolResultRow {
  type: 'tool-result';
  id: string;
  name: string;
  result?: unknown;
  error?: string;
}

/** The end of a turn, with its usage. */
export interface LlmFinishRow {
  type: 'finish';
  reason: LlmFinishReason;
  usage?: LlmUsage;
  message?: string;
}

export type LlmStreamRow = LlmDeltaRow | LlmReasoningRow | LlmToolCallRow | LlmToolResultRow | LlmFinishRow;

export interface ToStreamRowsOptions {
  /** Include reasoning rows (default true). */
  reasoning?: boolean;
}

export async function* toStreamRows(
  events: AsyncIterable<LlmToolLoopEvent | LlmRawEvent>,
  options: ToStreamRowsOptions = {},
): AsyncGenerator<LlmStreamRow, void, undefined> {
  const reasoning = options.reasoning !== false;
  for await (const event of events) {
    switch (event.type) {
      case 'text':
        yield { delta: event.delta };
        break;
      case 'reasoning':
        if (reasoning) yield { type: 'reasoning', delta: event.delta };
        break;
      case 'tool-call':
        yield event.error === undefined
          ? { type: 'tool-call', id: event.id, name: event.name, arguments: event.arguments }
          : { type: 'tool-call', id: event.id, name: event.name, rawArguments: event.rawArguments, error: event.error };
        break;
      case 'tool-result':
        yield event.isError ? { type: 'tool-result', id: event.id, name: event.name, error: event.error } : { type: 'tool-result', id: event.id, name: event.name, result: event.result };
        break;
      case 'finish': {
        const row: LlmFinishRow = { type: 'finish', reason: event.reason };
        if (event.usage) row.usage = event.usage;
        if (event.message) row.message = event.message;
        yield row;
        break;
      }
      default:
        break;
    }
  }
}
