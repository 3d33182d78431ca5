import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { RpcMcp, RpcMethod, RpcStream, StreamFormat, resultChunks, type RpcContext } from '@nest-jsonrpc/server';
import { ChatModel } from '../llm/chat-model.js';
import { CHAT_ROW_SCHEMA, ChatDto, DownloadDto, EXPORT_ROW_SCHEMA, ExportDto, LogLine, LogsTailDto, RESULT_CHUNK_ROW_SCHEMA } from './streaming-demo.dto.js';

const LEVELS = ['info', 'info', 'info', 'warn', 'debug', 'error'] as const;

/** Byte `i` of the generated download: a pattern a client can check without the file. */
export const downloadByte = (i: number): number => (i * 31 + 7) & 0xff;

/** Streaming examples: `curl -N` them (see docs/streaming.md) or open http://127.0.0.1:3000/ for chat. */
@Injectable()
export class StreamingDemoRpc {
  constructor(private readonly chatModel: ChatModel) {}

  /**
   * A chat reply streamed token by token over SSE through an `@nest-jsonrpc/llm` adapter: the
   * offline model by default, a real provider when its key is set (see apps/demo/src/llm). Rows:
   * `{ index, delta }` per token, then `{ done: true, finish_reason }`.
   */
  @RpcMethod('chat.stream', {
    summary: 'Streams a chat reply token by token',
    description: 'SSE rows {index, delta} per token, then {done, finish_reason}; from a real LLM when a provider key is set, else the offline model.',
    tags: ['streams'],
  })
  @RpcStream({ format: StreamFormat.Sse, row: CHAT_ROW_SCHEMA })
  // As an MCP tool: each token is one notifications/progress (with a progressToken), the result the whole reply.
  @RpcMcp({ title: 'Chat', format: 'plain' })
  async *chat(p: ChatDto, ctx: RpcContext) {
    let index = 0;
    // ctx.signal aborts the provider call: a closed tab closes the upstream connection at once.
    for await (const event of this.chatModel.stream(p.prompt, { delayMs: p.delayMs, signal: ctx.signal })) {
      if (event.type === 'text') yield { index: index++, delta: event.delta };
      else if (event.type === 'finish') yield { done: true, finish_reason: event.reason };
    }
  }

  /** A log tail: NDJSON until the client leaves. */
  @RpcMethod('logs.tail', { summary: 'Tails a simulated log until the client disconnects', tags: ['streams'] })
  @RpcStream({ format: StreamFormat.Ndjson, row: LogLine })
  async *tail(p: LogsTailDto, ctx: RpcContext) {
    for (let seq = 1; ; seq++) {
      yield { seq, ts: new Date().toISOString(), level: LEVELS[seq % LEVELS.length], message: `request ${seq} served` };
      await sleep(p.intervalMs ?? 500, undefined, { signal: ctx.signal });
    }
  }

  /** A long job reporting progress over SSE, then where to fetch the result. */
  @RpcMethod('export.progress', { summary: 'Reports export progress: {percent} rows, then {done, url}', tags: ['streams'] })
  @RpcStream({ format: StreamFormat.Sse, row: EXPORT_ROW_SCHEMA })
  async *exportProgress(p: ExportDto, ctx: RpcContext) {
    const steps = p.steps ?? 10;
    for (let step = 1; step <= steps; step++) {
      await sleep(p.stepMs ?? 100, undefined, { signal: ctx.signal });
      yield { percent: Math.round((step * 100) / steps) };
    }
    yield { done: true, url: `/exports/${ctx.requestId}.csv` };
  }

  /** A generated binary file as base64 `result_chunk` rows. */
  @RpcMethod('files.download', { summary: 'Streams a generated file of `size` bytes as base64 result_chunk rows', tags: ['streams'] })
  @RpcStream({ format: StreamFormat.Ndjson, row: RESULT_CHUNK_ROW_SCHEMA })
  download(p: DownloadDto, ctx: RpcContext) {
    return resultChunks(`file-${ctx.requestId}`, generatedFile(p.size), { encoding: 'base64', chunkSize: p.chunkSize ?? 48 * 1024 });
  }
}

/** The file, produced in 64 KiB pieces as a disk or network read would be. */
async function* generatedFile(size: number): AsyncGenerator<Uint8Array> {
  const piece = 64 * 1024;
  for (let offset = 0; offset < size; offset += piece) {
    const bytes = new Uint8Array(Math.min(piece, size - offset));
    for (let i = 0; i < bytes.length; i++) bytes[i] = downloadByte(offset + i);
    yield bytes;
  }
}
