import type { Tree } from '@angular-devkit/schematics';
import { readText } from './nest-project';

/**
 * New file contents, planned in full before the first write: every check that can stop a schematic
 * runs while planning, so a stopped run leaves every file as it was.
 */
export class PendingWrites {
  private readonly planned = new Map<string, string>();

  constructor(private readonly tree: Tree) {}

  /** The file as planned so far, else as it is. */
  read(path: string): string | undefined {
    return this.planned.get(path) ?? readText(this.tree, path);
  }

  write(path: string, text: string): void {
    if (readText(this.tree, path) === text) this.planned.delete(path);
    else this.planned.set(path, text);
  }

  has(path: string): boolean {
    return this.planned.has(path);
  }

  commit(): void {
    for (const [path, text] of this.planned) {
      if (this.tree.exists(path)) this.tree.overwrite(path, text);
      else this.tree.create(path, text);
    }
  }
}
