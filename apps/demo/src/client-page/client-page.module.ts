import { Module } from '@nestjs/common';
import { ClientPageController } from './client-page.controller.js';

/** A browser page that calls the demo with @nest-jsonrpc/client (served at /client). */
@Module({ controllers: [ClientPageController] })
export class ClientPageModule {}
