/** A provider that keeps every `JsonRpcEvent` the module emits (through `@nestjs/event-emitter`), in order. */
import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { JsonRpcEvent } from '@nest-jsonrpc/server';

@Injectable()
export class EventRecorder {
  readonly events: Array<{ name: string; payload: any }> = [];

  @OnEvent(JsonRpcEvent.CallSucceeded) onSucceeded(payload: any) { this.events.push({ name: JsonRpcEvent.CallSucceeded, payload }); }
  @OnEvent(JsonRpcEvent.CallFailed) onFailed(payload: any) { this.events.push({ name: JsonRpcEvent.CallFailed, payload }); }
  @OnEvent(JsonRpcEvent.StreamStarted) onStreamStarted(payload: any) { this.events.push({ name: JsonRpcEvent.StreamStarted, payload }); }
  @OnEvent(JsonRpcEvent.StreamFinished) onStreamFinished(payload: any) { this.events.push({ name: JsonRpcEvent.StreamFinished, payload }); }
  @OnEvent(JsonRpcEvent.DurableStarted) onDurableStarted(payload: any) { this.events.push({ name: JsonRpcEvent.DurableStarted, payload }); }
  @OnEvent(JsonRpcEvent.DurableFinished) onDurableFinished(payload: any) { this.events.push({ name: JsonRpcEvent.DurableFinished, payload }); }

  /** The payloads of one event, in the order emitted. */
  named(name: string) {
    return this.events.filter((e) => e.name === name).map((e) => e.payload);
  }
}
