import { Module } from '@nestjs/common';
import { LlmDemoModule } from '../llm/llm-demo.module.js';
import { AgentRpc } from './agent.rpc.js';
import { WeatherRpc } from './weather.rpc.js';

/**
 * `agent.ask` and its public tool `weather.get`. Its protected tool, `admin.stats`, comes from the
 * AccountModule (which also sets `request.user` from a bearer token); needs the stream route.
 */
@Module({ imports: [LlmDemoModule], providers: [AgentRpc, WeatherRpc] })
export class AgentModule {}
