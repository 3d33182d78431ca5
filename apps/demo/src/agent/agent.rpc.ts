import { Injectable } from '@nestjs/common';
import { runToolLoop, toStreamRows } from '@nest-jsonrpc/llm';
import { RpcMethod, RpcStream, RpcToolset, StreamFormat, type RpcContext } from '@nest-jsonrpc/server';
import { ChatModel } from '../llm/chat-model.js';
import { AgentAskDto } from './agent.dto.js';

/** The methods the agent may call: one public, one for admins (`admin.stats`, apps/demo/src/account). */
export const AGENT_TOOLS = ['weather.get', 'admin.stats'];

const SYSTEM = 'You are the nest-jsonrpc demo agent. Use the tools when they help, then answer briefly.';

/** One row of `agent.ask` (the rows of `toStreamRows`, docs/llm.md). */
const AGENT_ROW_SCHEMA = {
  // anyOf, not oneOf: a reasoning row ({ type, delta }) matches both shapes.
  anyOf: [
    { type: 'object', properties: { delta: { type: 'string' } }, required: ['delta'] },
    { type: 'object', properties: { type: { enum: ['reasoning', 'tool-call', 'tool-result', 'finish'] } }, required: ['type'] },
  ],
};

@Injectable()
export class AgentRpc {
  constructor(
    private readonly chat: ChatModel,
    private readonly toolset: RpcToolset,
  ) {}

  /**
   * Runs the tool loop on the same model as `chat.stream` (offline by default), with the app's own
   * `weather.get` and `admin.stats` as tools. Each tool call runs through the whole pipeline as
   * this caller: without the admin role, `admin.stats` answers the model `Access denied`.
   */
  @RpcMethod('agent.ask', {
    summary: 'Answers a question with tools (an LLM tool loop)',
    tags: ['agent'],
    description: 'Answers a question with the help of tools (weather.get, and admin.stats for admins), streaming text, tool calls, tool results and usage as SSE rows.',
  })
  @RpcStream({ format: StreamFormat.Sse, row: AGENT_ROW_SCHEMA })
  ask(p: AgentAskDto, ctx: RpcContext) {
    const tools = this.toolset.tools(AGENT_TOOLS, ctx);
    const request = this.chat.requestFor(p.question, { delayMs: p.delayMs, system: SYSTEM });
    return toStreamRows(runToolLoop({ provider: this.chat.provider, request, tools, maxTurns: 4, signal: ctx.signal }));
  }
}
