import type { Tree } from '@angular-devkit/schematics';
import { applyEdits, modify } from 'jsonc-parser';
import { posix } from 'node:path';
import * as ts from 'typescript';
import type { NestProject } from './nest-project';
import { jsonFormattingOf, readText } from './nest-project';

export const TSCONFIG = 'tsconfig.json';

const DECORATOR_FLAGS = ['experimentalDecorators', 'emitDecoratorMetadata'] as const;
/** Module kinds that emit ESM for an ESM package (looked up by name: older TypeScripts lack Node18/Node20/Preserve). */
const ESM_MODULE_KINDS = new Set(
  ['Node16', 'Node18', 'Node20', 'NodeNext', 'ES2020', 'ES2022', 'ESNext', 'Preserve'].map((name) => (ts.ModuleKind as unknown as Record<string, number>)[name]),
);

export interface CompilerSettingsCheck {
  /** The new tsconfig.json text, when a decorator flag had to be turned on. */
  readonly tsconfig: string | undefined;
  readonly enabled: readonly string[];
  /** What the app must change by hand, for the report. */
  readonly warnings: readonly string[];
}

/**
 * Checks what JsonRpcModule needs from the compiler: decorators with metadata (the params DTO is read
 * from `design:paramtypes`), and, in an ESM app, ES module output. The effective options are read
 * the way tsc reads them, `extends` included. Missing decorator flags are turned on in
 * tsconfig.json. A CommonJS app needs nothing more: the package loads with require() too.
 */
export function checkCompilerSettings(tree: Tree, project: NestProject): CompilerSettingsCheck {
  const text = readText(tree, TSCONFIG);
  const warnings: string[] = [];
  if (text === undefined) {
    warnings.push(`There is no ${TSCONFIG}: make sure the compiler runs with experimentalDecorators and emitDecoratorMetadata on.`);
    return { tsconfig: undefined, enabled: [], warnings };
  }
  const options = effectiveCompilerOptions(tree, text);
  if (project.isEsm && options.module !== undefined && !ESM_MODULE_KINDS.has(options.module)) {
    warnings.push(`${TSCONFIG} compiles to ${ts.ModuleKind[options.module]}, but the app is ESM: set "module" and "moduleResolution" to "nodenext".`);
  }
  const enabled = DECORATOR_FLAGS.filter((flag) => options[flag] !== true);
  let updated = text;
  for (const flag of enabled) {
    updated = applyEdits(updated, modify(updated, ['compilerOptions', flag], true, { formattingOptions: jsonFormattingOf(text) }));
  }
  return { tsconfig: enabled.length > 0 ? updated : undefined, enabled, warnings };
}

function effectiveCompilerOptions(tree: Tree, tsconfigText: string): ts.CompilerOptions {
  const { config } = ts.parseConfigFileTextToJson(TSCONFIG, tsconfigText);
  const host: ts.ParseConfigHost = {
    useCaseSensitiveFileNames: true,
    fileExists: (path) => tree.exists(path),
    readFile: (path) => readText(tree, path),
    readDirectory: () => [],
  };
  return ts.parseJsonConfigFileContent(config ?? {}, host, '/', undefined, posix.join('/', TSCONFIG)).options;
}
