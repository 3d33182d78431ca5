import { Controller, Get, Header } from '@nestjs/common';
import { readFileSync } from 'node:fs';

/**
 * Serves apps/demo/public/chat.html (`chat.stream` arriving token by token through a plain
 * `EventSource`) and demo.css, the stylesheet the demo's pages share. Read once at startup; a
 * demo page needs no static-file plugin.
 */
const CHAT_PAGE = readFileSync(new URL('../../public/chat.html', import.meta.url), 'utf8');
const DEMO_CSS = readFileSync(new URL('../../public/demo.css', import.meta.url), 'utf8');

@Controller()
export class StreamingPageController {
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-cache')
  chatPage(): string {
    return CHAT_PAGE;
  }

  @Get('demo.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'no-cache')
  stylesheet(): string {
    return DEMO_CSS;
  }
}
