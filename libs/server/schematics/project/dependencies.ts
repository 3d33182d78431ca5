import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { applyEdits, modify, parse } from 'jsonc-parser';
import { jsonFormattingOf, type PackageJson } from './nest-project';

export const OWN_PACKAGE = '@nest-jsonrpc/server';

/**
 * This package's own package.json: its version and peer dependencies are the one source of truth for
 * what `nest add` installs. Found by walking up from the compiled schematics (dist/schematics/...).
 */
export function ownPackageJson(): PackageJson {
  for (let directory = __dirname; dirname(directory) !== directory; directory = dirname(directory)) {
    try {
      const candidate = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as PackageJson;
      if (candidate.name === OWN_PACKAGE) return candidate;
    } catch {
      // no package.json at this level
    }
  }
  throw new Error(`${OWN_PACKAGE}'s package.json not found above ${__dirname}`);
}

export interface DependencyPlan {
  /** name -> version range, to add to `dependencies`. */
  readonly add: Readonly<Record<string, string>>;
  /** Dependencies the app has at a range that may not satisfy the peer range, for a note. */
  readonly differing: readonly string[];
}

/** The packages of each HTTP platform the module serves on (optional peers: the app has one), Nest's adapter first. */
export const PLATFORM_PACKAGES = { fastify: ['@nestjs/platform-fastify', 'fastify'], express: ['@nestjs/platform-express', 'express'] } as const;

/**
 * The dependencies the app must declare: this package, its required peers and the packages of the
 * platform the app runs on (plus better-sqlite3 for durable streams on the default store). An app
 * that declares one already keeps its range. Each gets the newest alternative of the peer range:
 * for better-sqlite3 that is 13, right for an app made by @nestjs/cli 12 (Node >= 22.22), where 13
 * runs and 12 aborts on Node >= 24.19. Nest's adapter of the platform follows the app's
 * `@nestjs/core` range (Nest's packages release in lockstep).
 */
export function planDependencies(app: PackageJson, own: PackageJson, options: { durable: boolean; platform: keyof typeof PLATFORM_PACKAGES }): DependencyPlan {
  const declared = { ...app.devDependencies, ...app.dependencies };
  const peers = own.peerDependencies ?? {};
  const wanted: Record<string, string> = { [OWN_PACKAGE]: `^${own.version}` };
  const platform: readonly string[] = PLATFORM_PACKAGES[options.platform];
  for (const [name, range] of Object.entries(peers)) {
    if (!own.peerDependenciesMeta?.[name]?.optional || platform.includes(name)) wanted[name] = newestAlternative(range);
  }
  if (options.durable && peers['better-sqlite3']) wanted['better-sqlite3'] = newestAlternative(peers['better-sqlite3']);
  const core = declared['@nestjs/core'];
  const nestAdapter = platform[0];
  if (core && peers[nestAdapter] && acceptedBy(peers[nestAdapter], core)) wanted[nestAdapter] = core;

  const add: Record<string, string> = {};
  const differing: string[] = [];
  for (const [name, range] of Object.entries(wanted)) {
    const existing = declared[name];
    if (existing === undefined) add[name] = range;
    else if (peers[name] && !acceptedBy(peers[name], existing)) differing.push(`${name}@${existing} (${OWN_PACKAGE} expects ${peers[name]})`);
  }
  return { add, differing };
}

/**
 * Adds `dependencies` entries with jsonc-parser's formatting-preserving edits, each at its
 * alphabetical place (where npm itself would put it), in the file's own indentation.
 */
export function addDependencies(packageJsonText: string, add: Readonly<Record<string, string>>): string {
  const formattingOptions = jsonFormattingOf(packageJsonText);
  let text = packageJsonText;
  if (Object.keys(add).length > 0 && (parse(text) as PackageJson).dependencies === undefined) {
    text = applyEdits(text, modify(text, ['dependencies'], {}, { formattingOptions }));
  }
  for (const [name, range] of Object.entries(add)) {
    const edits = modify(text, ['dependencies', name], range, {
      formattingOptions,
      getInsertionIndex: (names) => names.filter((existing) => existing.localeCompare(name) < 0).length,
    });
    text = applyEdits(text, edits);
  }
  return text;
}

/** `^0.14.0 || ^0.15.0` -> `^0.15.0`: a new dependency gets the newest range the peer accepts. */
function newestAlternative(range: string): string {
  const alternatives = range.split('||').map((r) => r.trim());
  return alternatives[alternatives.length - 1];
}

/**
 * Whether a declared range stays within one of the peer range's alternatives, compared by the part of
 * the version semver treats as breaking (the major, or the minor of a 0.x). A deliberately coarse
 * check: it only decides whether to print a note, never what gets installed.
 */
function acceptedBy(peerRange: string, declared: string): boolean {
  const key = (range: string) => {
    const [, major, minor] = /(\d+)(?:\.(\d+))?/.exec(range) ?? [];
    return major === '0' ? `0.${minor}` : major;
  };
  return peerRange.split('||').some((alternative) => key(alternative) === key(declared));
}
