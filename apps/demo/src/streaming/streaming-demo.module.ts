import { Module } from '@nestjs/common';
import { LlmDemoModule } from '../llm/llm-demo.module.js';
import { StreamingDemoRpc } from './streaming-demo.rpc.js';
import { StreamingPageController } from './streaming-page.controller.js';

/** The streaming examples and the browser page; needs `JsonRpcModule.forRoot({ stream: { enabled: true } })`. */
@Module({ imports: [LlmDemoModule], controllers: [StreamingPageController], providers: [StreamingDemoRpc] })
export class StreamingDemoModule {}
