import type { ModuleRef } from '@nestjs/core';

/**
 * A provider the app may have registered (its `ThrottlerModule` storage, its `CACHE_MANAGER`, an
 * `RPC_RATE_LIMIT_BYPASS`), looked up anywhere in the app, or undefined. Looked up when first
 * needed (at bootstrap, after every module has been instantiated) rather than injected, so none
 * of them is required.
 */
export function findAppProvider<T>(moduleRef: ModuleRef, token: string | symbol | object): T | undefined {
  try {
    return moduleRef.get<T>(token as never, { strict: false }) ?? undefined;
  } catch {
    return undefined;
  }
}
