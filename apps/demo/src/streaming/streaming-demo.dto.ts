import type { RpcJsonSchema } from '@nest-jsonrpc/server';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class ChatDto {
  @IsString()
  @MaxLength(2000)
  prompt!: string;

  /** Milliseconds between tokens (simulated model latency). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2000)
  delayMs?: number;
}

export class LogsTailDto {
  /** Milliseconds between log lines. */
  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(60_000)
  intervalMs?: number;
}

export class ExportDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  steps?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(5000)
  stepMs?: number;
}

export class DownloadDto {
  /** Size of the generated file in bytes (up to 16 MiB). */
  @IsInt()
  @Min(0)
  @Max(16 * 1024 * 1024)
  size!: number;

  @IsOptional()
  @IsInt()
  @Min(3)
  @Max(1024 * 1024)
  chunkSize?: number;
}

/** A `chat.stream` row: a token, then one closing row with the finish reason. */
export const CHAT_ROW_SCHEMA: RpcJsonSchema = {
  anyOf: [
    { type: 'object', properties: { index: { type: 'integer', minimum: 0 }, delta: { type: 'string' } }, required: ['index', 'delta'], additionalProperties: false },
    {
      type: 'object',
      properties: { done: { type: 'boolean', enum: [true] }, finish_reason: { type: 'string', enum: ['stop', 'length', 'tool-calls', 'content-filter', 'error', 'other'] } },
      required: ['done', 'finish_reason'],
      additionalProperties: false,
    },
  ],
};

export class LogLine {
  @IsInt()
  @Min(1)
  seq!: number;

  @IsISO8601()
  ts!: string;

  @IsIn(['info', 'warn', 'debug', 'error'])
  level!: string;

  @IsString()
  message!: string;
}

/** An `export.progress` row: `{percent}` per step, then `{done, url}`. */
export const EXPORT_ROW_SCHEMA: RpcJsonSchema = {
  anyOf: [
    { type: 'object', properties: { percent: { type: 'integer', minimum: 0, maximum: 100 } }, required: ['percent'], additionalProperties: false },
    { type: 'object', properties: { done: { type: 'boolean', enum: [true] }, url: { type: 'string' } }, required: ['done', 'url'], additionalProperties: false },
  ],
};

/** A `result_chunk` row (docs/streaming.md, "Chunked results"), as `resultChunks` writes it. */
export const RESULT_CHUNK_ROW_SCHEMA: RpcJsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['result_chunk'] },
    result_id: { type: 'string' },
    chunk_seq: { type: 'integer', minimum: 0 },
    data: { type: 'string' },
    encoding: { type: 'string', enum: ['utf8', 'base64'] },
    more: { type: 'boolean' },
  },
  required: ['type', 'result_id', 'chunk_seq', 'data', 'encoding', 'more'],
  additionalProperties: false,
};
