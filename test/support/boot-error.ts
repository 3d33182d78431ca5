import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CapturingLogger, testAdapter } from './rpc-test-app.js';

/**
 * Boots `module` on the platform of this run without listening and returns the error, if any.
 * abortOnError: false, so Nest throws instead of exiting.
 */
export async function bootError(module: Type<unknown>): Promise<Error | undefined> {
  let app: INestApplication | undefined;
  try {
    app = await NestFactory.create<INestApplication>(module, testAdapter(), { logger: new CapturingLogger(), abortOnError: false });
    await app.init();
    return undefined;
  } catch (error) {
    return error as Error;
  } finally {
    await app?.close().catch(() => undefined);
  }
}
