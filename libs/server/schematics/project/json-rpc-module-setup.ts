import { parseTypeScript } from '../typescript/source-text';
import { jsonRpcModuleCalls } from '../typescript/json-rpc-module-options';
import type { PendingWrites } from './pending-writes';
import type { Tree } from '@angular-devkit/schematics';
import { typeScriptFilesUnder } from './source-files';

/**
 * The file that configures JsonRpcModule (`JsonRpcModule.forRoot(...)` or `forRootAsync(...)`),
 * wherever the app put it: the module is global and configured once, so a second setup would be a
 * mistake. Spec files are skipped (they configure their own testing modules).
 */
export function findJsonRpcModuleSetup(tree: Tree, writes: PendingWrites, sourceRoot: string): { path: string; text: string } | undefined {
  for (const path of typeScriptFilesUnder(tree, sourceRoot)) {
    if (/spec\.ts$/.test(path)) continue;
    const text = writes.read(path);
    if (!text?.includes('JsonRpcModule')) continue;
    if (jsonRpcModuleCalls(parseTypeScript(path, text)).length > 0) return { path, text };
  }
  return undefined;
}
