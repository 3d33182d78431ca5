import type { Tree } from '@angular-devkit/schematics';
import { type FormattingOptions, type ParseError, parse as parseJsonc } from 'jsonc-parser';
import { posix } from 'node:path';
import { ManualStepsRequired } from '../report/manual-steps-required';

export interface PackageJson {
  name?: string;
  type?: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  version?: string;
}

/** What the schematics need to know about the app they run in. */
export interface NestProject {
  readonly packageJson: PackageJson;
  /** `src` (no leading or trailing slash), from the option, else nest-cli.json, else `src`. */
  readonly sourceRoot: string;
  /** The bootstrap file, `src/main.ts` by default (nest-cli.json `entryFile`). */
  readonly entryFile: string;
  /** `"type": "module"`: relative imports carry `.js` (nodenext), as `nest new` writes them. */
  readonly isEsm: boolean;
  /** nest-cli.json's `collection`, when the file exists. */
  readonly nestCli: { readonly path: string; readonly collection: string | undefined } | undefined;
}

export const NEST_CLI_FILES = ['nest-cli.json', '.nest-cli.json', 'nest.json'] as const;

/**
 * Reads the app the schematic runs in. Throws ManualStepsRequired when it is not a Nest app: no
 * package.json, or one that does not depend on @nestjs/core.
 */
export function readNestProject(tree: Tree, sourceRootOption: string | undefined): NestProject {
  const packageJson = readJsonFile<PackageJson>(tree, 'package.json');
  const setUpByHand = 'Create a Nest app with `nest new <name>` and run the command inside it, or follow the README section "Use it in your own Nest app".';
  if (!packageJson) {
    throw new ManualStepsRequired('There is no package.json here: run this inside a Nest app (the folder `nest new` created).', [setUpByHand]);
  }
  const dependencies = { ...packageJson.devDependencies, ...packageJson.dependencies };
  if (!dependencies['@nestjs/core']) {
    throw new ManualStepsRequired('package.json does not depend on @nestjs/core: this is not a Nest app.', [setUpByHand]);
  }
  const nestCliPath = NEST_CLI_FILES.find((file) => tree.exists(file));
  const nestCli = nestCliPath ? readJsonFile<{ sourceRoot?: string; entryFile?: string; collection?: string }>(tree, nestCliPath) : undefined;
  const sourceRoot = trimSlashes(sourceRootOption || nestCli?.sourceRoot || 'src');
  return {
    packageJson,
    sourceRoot,
    entryFile: posix.join(sourceRoot, `${nestCli?.entryFile ?? 'main'}.ts`),
    isEsm: packageJson.type === 'module',
    nestCli: nestCliPath ? { path: nestCliPath, collection: nestCli?.collection } : undefined,
  };
}

/** A JSON (or JSON-with-comments, like tsconfig.json) file of the tree; undefined when absent. */
export function readJsonFile<T>(tree: Tree, path: string): T | undefined {
  const text = readText(tree, path);
  if (text === undefined) return undefined;
  const errors: ParseError[] = [];
  const value = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    throw new ManualStepsRequired(`${path} is not valid JSON (near character ${errors[0].offset}).`, [`Fix ${path} and run the command again.`]);
  }
  return value as T;
}

/** jsonc-parser formatting that matches the file's own indentation, for the properties it inserts. */
export function jsonFormattingOf(text: string): FormattingOptions {
  const indentation = /\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
  return { insertSpaces: !indentation.includes('\t'), tabSize: indentation.includes('\t') ? 1 : indentation.length, eol: '\n' };
}

export function readText(tree: Tree, path: string): string | undefined {
  return tree.read(path)?.toString('utf8');
}

function trimSlashes(path: string): string {
  return posix.normalize(path).replace(/^\.?\/+/, '').replace(/\/+$/, '') || '.';
}
