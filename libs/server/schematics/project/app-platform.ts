import type { Tree } from '@angular-devkit/schematics';
import { type HttpPlatformName, readBootstrap } from '../typescript/bootstrap-file';
import type { NestProject } from './nest-project';

/**
 * The HTTP platform the app runs on, for what a schematic generates (a spec's testing app): the one
 * main.ts creates it on; when main.ts cannot be read that way, Fastify if the app depends on
 * `@nestjs/platform-fastify`, else Express (Nest's default).
 */
export function appPlatform(tree: Tree, project: NestProject): HttpPlatformName {
  const text = tree.exists(project.entryFile) ? tree.readText(project.entryFile) : undefined;
  if (text !== undefined) {
    try {
      return readBootstrap(project.entryFile, text).platform;
    } catch {
      // Not a main.ts this schematic can follow: the dependencies decide.
    }
  }
  const { dependencies = {}, devDependencies = {} } = project.packageJson;
  return '@nestjs/platform-fastify' in { ...devDependencies, ...dependencies } ? 'fastify' : 'express';
}
