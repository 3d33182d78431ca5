import type { SchematicContext } from '@angular-devkit/schematics';

/**
 * What a schematic run changed and what the user should still know, printed once at the end (the
 * engine's own CREATE/UPDATE lines say which files; this says what happened in them and why).
 */
export class ChangeReport {
  private readonly changes: string[] = [];
  private readonly notes: string[] = [];

  changed(file: string, what: string): void {
    this.changes.push(`${file}: ${what}`);
  }

  note(text: string): void {
    this.notes.push(text);
  }

  get hasChanges(): boolean {
    return this.changes.length > 0;
  }

  print(logger: SchematicContext['logger'], title: string, nothingToDo: string, next: readonly string[] = []): void {
    const lines = this.hasChanges ? [title, ...this.changes.map((c) => `  - ${c}`)] : [nothingToDo];
    // What to do next follows a first set-up; after a run that changed nothing it may name what exists already.
    if (this.hasChanges && next.length > 0) lines.push('Next:', ...next.map((n) => `  ${n}`));
    logger.info(lines.join('\n'));
    for (const note of this.notes) logger.warn(`Note: ${note}`);
  }
}
