/**
 * jest on Node 20 cannot `require()` an ES module, and Nest 12 ships ESM only, so CommonJS
 * packages that require Nest (`@nestjs/throttler` 6) fail to load under jest — plain Node 20.19+
 * loads them fine. This setup file publishes the ESM Nest modules (the same instances the tests
 * import) and `cjs-requires-nest.transform.cjs` points those packages' `require('@nestjs/...')`
 * at them.
 */
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';

(globalThis as Record<string, unknown>).__nestEsmForCjs = { '@nestjs/common': common, '@nestjs/core': core };
