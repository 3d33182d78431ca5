/**
 * The schematics as the Nest CLI runs them: the built collection (libs/server/dist/schematics, what
 * the package ships) loaded by the devkit's SchematicTestRunner, against an in-memory app.
 */
import { Tree } from '@angular-devkit/schematics';
import { SchematicTestRunner, UnitTestTree } from '@angular-devkit/schematics/testing';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NEST_NEW_APP } from './fixtures/nest-new-app.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const COLLECTION = join(root, 'libs/server/dist/schematics/collection.json');

export interface Run {
  tree: UnitTestTree;
  /** Every line the schematic logged, `info: ...` / `warn: ...`. */
  logs: string[];
  /** Names of the tasks it scheduled (`node-package` = install). */
  tasks: string[];
}

export function createRunner(): SchematicTestRunner {
  if (!existsSync(COLLECTION)) throw new Error(`${COLLECTION} is missing: run \`npm run build\` first`);
  return new SchematicTestRunner('@nest-jsonrpc/server', COLLECTION);
}

/** An app tree: the `nest new` template with files replaced (a string) or removed (null). */
export function appTree(changes: Readonly<Record<string, string | null>> = {}, base: Readonly<Record<string, string>> = NEST_NEW_APP): UnitTestTree {
  const tree = new UnitTestTree(Tree.empty());
  for (const [path, text] of Object.entries({ ...base, ...changes })) if (text !== null) tree.create(path, text);
  return tree;
}

export async function run(runner: SchematicTestRunner, schematic: string, options: object, tree: UnitTestTree): Promise<Run> {
  const logs: string[] = [];
  const subscription = runner.logger.subscribe((entry) => logs.push(`${entry.level}: ${entry.message}`));
  try {
    const result = await runner.runSchematic(schematic, options, tree);
    return { tree: result, logs, tasks: runner.tasks.map((t) => t.name) };
  } finally {
    subscription.unsubscribe();
  }
}

/** Every file of a tree and its text, to show that a run changed nothing. */
export function snapshot(tree: Tree): Record<string, string> {
  const files: Record<string, string> = {};
  tree.visit((path) => {
    files[path] = tree.readText(path);
  });
  return files;
}
