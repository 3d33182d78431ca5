/**
 * Collects streamed tool-call fragments (OpenAI's indexed `tool_calls` deltas, Anthropic's
 * `input_json_delta`, Bedrock's `toolUse.input`, ...) until a call is complete, then parses its
 * JSON once. Exported for those who parse a provider stream themselves.
 */
import type { LlmToolCallEvent } from '../model/events.js';

/** One streamed fragment of the call at `index`: any field may be absent; `arguments` is appended. */
export interface ToolCallFragment {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

interface PendingCall {
  index: number;
  id?: string;
  name?: string;
  fragments: string[];
  providerMetadata?: Record<string, unknown>;
}

export class ToolCallAccumulator {
  private readonly pending = new Map<number, PendingCall>();

  /** Adds a fragment. The first id and name seen for an index are kept; argument pieces are appended in order. */
  add(fragment: ToolCallFragment): void {
    let call = this.pending.get(fragment.index);
    if (!call) {
      call = { index: fragment.index, fragments: [] };
      this.pending.set(fragment.index, call);
    }
    if (fragment.id && !call.id) call.id = fragment.id;
    if (fragment.name && !call.name) call.name = fragment.name;
    if (fragment.arguments) call.fragments.push(fragment.arguments);
  }

  /** Attaches provider data to the call at `index` (it travels on the completed event). */
  setProviderMetadata(index: number, metadata: Record<string, unknown>): void {
    const call = this.pending.get(index);
    if (call) call.providerMetadata = { ...call.providerMetadata, ...metadata };
  }

  /** True while a call at `index` has fragments not yet completed. */
  has(index: number): boolean {
    return this.pending.has(index);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Completes every pending call, in the order they started, and forgets them. */
  complete(): LlmToolCallEvent[] {
    const done: LlmToolCallEvent[] = [];
    for (const call of this.pending.values()) done.push(toEvent(call));
    this.pending.clear();
    return done;
  }

  /** Completes the call at `index` alone (a provider that closes calls one by one), or undefined if none is pending. */
  completeIndex(index: number): LlmToolCallEvent | undefined {
    const call = this.pending.get(index);
    if (!call) return undefined;
    this.pending.delete(index);
    return toEvent(call);
  }
}

/** Parses a call's joined arguments once: `''` means `{}`; invalid JSON keeps the raw text and says why. */
export function parseToolArguments(rawArguments: string): { arguments?: unknown; error?: string } {
  if (rawArguments.trim() === '') return { arguments: {} };
  try {
    return { arguments: JSON.parse(rawArguments) };
  } catch (error) {
    return { error: `Invalid JSON in tool call arguments: ${(error as Error).message}` };
  }
}

function toEvent(call: PendingCall): LlmToolCallEvent {
  const rawArguments = call.fragments.join('');
  const parsed = parseToolArguments(rawArguments);
  const event: LlmToolCallEvent = { type: 'tool-call', id: call.id ?? `call_${call.index}`, name: call.name ?? '', rawArguments };
  if (parsed.error === undefined) event.arguments = parsed.arguments;
  else event.error = parsed.error;
  if (call.providerMetadata) event.providerMetadata = call.providerMetadata;
  return event;
}
