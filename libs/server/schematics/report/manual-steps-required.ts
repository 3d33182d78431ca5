import { SchematicsException } from '@angular-devkit/schematics';

/**
 * The schematic stopped before writing anything: it says why and what to do by hand. Thrown while
 * changes are still being planned, so the engine commits nothing (no file is half-written).
 */
export class ManualStepsRequired extends SchematicsException {
  constructor(
    readonly reason: string,
    readonly steps: readonly string[],
  ) {
    super([reason, 'Nothing was changed. To do it by hand:', ...steps.map((step) => `  - ${step}`)].join('\n'));
    this.name = 'ManualStepsRequired';
  }
}
