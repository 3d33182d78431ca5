import { Module } from '@nestjs/common';
import { ChatModel } from './chat-model.js';

/** The model behind `chat.stream` (a real provider with credentials, else the offline one). */
@Module({ providers: [ChatModel], exports: [ChatModel] })
export class LlmDemoModule {}
