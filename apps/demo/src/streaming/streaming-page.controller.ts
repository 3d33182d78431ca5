import { Controller, Get, Header } from '@nestjs/common';
import { readFileSync } from 'node:fs';

/**
 * Serves apps/demo/public/chat.html: `chat.stream` arriving token by token through a plain
 * `EventSource`. Read once at startup; a demo page needs no static-file plugin.
 */
const CHAT_PAGE = readFileSync(new URL('../../public/chat.html', import.meta.url), 'utf8');

@Controller()
export class StreamingPageController {
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-cache')
  chatPage(): string {
    return CHAT_PAGE;
  }
}
