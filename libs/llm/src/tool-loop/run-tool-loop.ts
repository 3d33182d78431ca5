/**
 * The tool loop: stream one model turn (its events pass through live), run the turn's complete
 * tool calls concurrently, yield one `tool-result` per call, append the assistant turn and the
 * results to the conversation in the provider's shape, and stream the next turn — until a turn
 * asks for no tool, or `maxTurns` model requests have been made.
 */
import { abortError } from '../model/errors.js';
import type { LlmFinishEvent, LlmToolCallEvent, LlmToolLoopEvent, LlmToolResultEvent } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmRequest, LlmToolDefinition } from '../model/request.js';
import type { LlmTool } from './llm-tool.js';

export interface RunToolLoopOptions {
  provider: LlmProvider;
  /** The first turn's request; its `tools` (if any) are described to the model along with `tools`. */
  request: LlmRequest;
  tools: readonly LlmTool[];
  /** How many model requests at most (default 8). */
  maxTurns?: number;
  signal?: AbortSignal;
}

export const DEFAULT_MAX_TURNS = 8;

/**
 * Every turn's events are yielded as they stream, each turn closed by its own `finish`; the
 * loop's last event is always a `finish`. When `maxTurns` is reached while the model still asks
 * for tools, those calls are not run and a last `finish` with reason `other` says so.
 */
export async function* runToolLoop(options: RunToolLoopOptions): AsyncGenerator<LlmToolLoopEvent, void, undefined> {
  const { provider, request, tools, signal } = options;
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new RangeError(`maxTurns must be a positive integer, got ${maxTurns}`);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const definitions: LlmToolDefinition[] = [
    ...(request.tools ?? []).filter((definition) => !byName.has(definition.name)),
    ...tools.map((tool) => ({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.parameters })),
  ];
  const toolSignal = signal ?? new AbortController().signal;
  const messages: LlmMessage[] = [...request.messages];

  for (let turn = 1; ; turn++) {
    const calls: LlmToolCallEvent[] = [];
    let text = '';
    let finish: LlmFinishEvent | undefined;
    for await (const event of provider.stream({ ...request, messages, tools: definitions.length ? definitions : undefined }, { signal })) {
      if (event.type === 'text') text += event.delta;
      else if (event.type === 'tool-call') calls.push(event);
      else if (event.type === 'finish') finish = event;
      yield event;
    }
    if (!calls.length || !finish) return;
    if (turn >= maxTurns) {
      yield {
        type: 'finish',
        reason: 'other',
        message: `Stopped after ${maxTurns} model turn${maxTurns === 1 ? '' : 's'} (maxTurns); the model still asked for: ${calls.map((c) => c.name).join(', ')}`,
      };
      return;
    }

    messages.push({
      role: 'assistant',
      ...(text ? { content: text } : {}),
      toolCalls: calls.map((call) => ({
        id: call.id,
        name: call.name,
        arguments: call.arguments ?? {},
        ...(call.providerMetadata ? { providerMetadata: call.providerMetadata } : {}),
      })),
    });
    // Started together, reported in call order.
    const running = calls.map((call) => runTool(call, byName.get(call.name), toolSignal));
    for (let i = 0; i < running.length; i++) {
      const result = await running[i];
      if (signal?.aborted) throw abortError(signal);
      messages.push({ role: 'tool', toolCallId: result.id, name: result.name, content: result.content, ...(result.event.isError ? { isError: true } : {}) });
      yield result.event;
    }
  }
}

interface ToolOutcome {
  id: string;
  name: string;
  content: string;
  event: LlmToolResultEvent;
}

async function runTool(call: LlmToolCallEvent, tool: LlmTool | undefined, signal: AbortSignal): Promise<ToolOutcome> {
  const failed = (error: string): ToolOutcome => ({
    id: call.id,
    name: call.name,
    content: error,
    event: { type: 'tool-result', id: call.id, name: call.name, error, isError: true },
  });
  if (!tool) return failed(`Unknown tool: ${call.name}`);
  if (call.error !== undefined) return failed(`The arguments were not valid JSON (${call.error}); nothing was run`);
  try {
    const result = await untilAborted(Promise.resolve(tool.execute(call.arguments, { signal, toolCallId: call.id })), signal);
    return {
      id: call.id,
      name: call.name,
      content: typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null'),
      event: { type: 'tool-result', id: call.id, name: call.name, result, isError: false },
    };
  } catch (error) {
    if (signal.aborted) return failed('Aborted');
    return failed(error instanceof Error ? error.message : String(error));
  }
}

/** A tool that ignores the signal cannot hold the loop past an abort. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
