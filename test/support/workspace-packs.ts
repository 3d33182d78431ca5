import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './processes.js';

export interface PackedPackage {
  /** The workspace's package.json, the manifest a registry serves for this version. */
  readonly manifest: Record<string, unknown> & { name: string; version: string };
  readonly file: string;
  readonly integrity: string;
  readonly shasum: string;
}

/**
 * `npm pack` of every workspace under libs/ (read from the root package.json, so packages added
 * later are picked up), exactly what would be published. The libs must be built already.
 */
export async function packLibraries(root: string, destination: string): Promise<PackedPackage[]> {
  const workspaces = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces as string[]).filter((w) => w.startsWith('libs/'));
  const packed: PackedPackage[] = [];
  for (const workspace of workspaces) {
    const directory = join(root, workspace);
    const { output } = await run('npm', ['pack', '--json', '--pack-destination', destination, '--loglevel=error'], { cwd: directory });
    const [result] = JSON.parse(output.slice(output.indexOf('['))) as { filename: string; integrity: string; shasum: string }[];
    packed.push({
      manifest: JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')),
      file: join(destination, result.filename),
      integrity: result.integrity,
      shasum: result.shasum,
    });
  }
  return packed;
}

/** The versions the workspace has installed, for a scratch app that must build against the same ones. */
export function workspaceVersions(root: string, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version as string]));
}
