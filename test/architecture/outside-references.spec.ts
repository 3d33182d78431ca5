/**
 * The design lives in the repository: no source file, comment or doc cites a document, issue or
 * conversation a reader of the repository does not have — a design document outside it ("DESIGN
 * §N"), issue numbers ("issue 13", "#23"), planning rounds ("wave 1"), seed documents, "the
 * Symfony bundle". A comment says its reason in place or points at a file here (usually a
 * docs/*.md section). Public upstream bugs named with their repository (`nodejs/node#65446`) and
 * commit ids naming a measured build stay allowed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const self = relative(root, fileURLToPath(import.meta.url));

/** Where source, scripts and docs live; every README beside them is read too. */
const SCANNED_DIRS = ['libs', 'apps', 'test', 'bench', 'scripts', '.ci', 'docs'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', 'data', '.bench-results', '.prof', 'test-results']);
const TEXT_FILE = /\.(?:[cm]?[jt]s|tsx|md|sh|html)$|^run$/;

/** Each with what it catches, so a failure says which rule a line broke. */
const FORBIDDEN: readonly (readonly [string, RegExp])[] = [
  ['a design document outside the repository', /\bDESIGN\b|DESIGN\.md|\.\.\/shared\//],
  ['an issue number', /\bissues? #?\d+/i],
  ['an issue number', /(?<![\w/&.-])#\d+\b/],
  ['a planning round', /\bwaves?[- ]?\d|\bthis wave\b/i],
  ['a seed document', /\bseed 0\d\d\b|\bthe seed's\b/i],
  ['a project outside the repository as the spec', /\bSymfony bundle/i],
  ['the issue a change came from', /\bwhere the issue was silent\b|\bthe issue (?:says|quotes|measured)\b/i],
];

function scannedFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIPPED_DIRS.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...scannedFiles(path));
    else if (TEXT_FILE.test(name)) out.push(path);
  }
  return out;
}

function offences(): string[] {
  const files = [join(root, 'README.md'), ...SCANNED_DIRS.flatMap((d) => scannedFiles(join(root, d)))];
  const found: string[] = [];
  for (const file of files) {
    const rel = relative(root, file);
    if (rel === self) continue;
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      for (const [what, pattern] of FORBIDDEN) {
        if (pattern.test(line)) found.push(`${rel}:${i + 1} cites ${what}: ${line.trim().slice(0, 120)}`);
      }
    });
  }
  return found;
}

describe('references outside the repository', () => {
  it('no source file, comment or doc cites a document, issue or conversation outside the repository', () => {
    expect(offences()).toEqual([]);
  });

  it('the rules catch what they are for, and leave upstream bugs and spec sections alone', () => {
    const caught = (line: string) => FORBIDDEN.some(([, pattern]) => pattern.test(line));
    for (const line of [
      ' * Frames of DESIGN §4.',
      '// Describing the API (issue 10).',
      "describe('tool text formats (Issue 11 item 5)', () => {",
      '// see #23',
      ' * Names wave 1 exported.',
      ' * the wave-1 build',
      ' * (seed 001\'s `/mcp/call` column)',
      '## The Symfony bundle\'s REST surface',
      '## Decisions where the issue was silent',
    ]) expect([line, caught(line)]).toEqual([line, true]);
    for (const line of [
      '// aborts on Node >= 24.19 (nodejs/node#65446)',
      ' * A request object (spec §4).',
      ' * zod issue codes, one entry per issue',
      '  --j-key: #0550ae;',
      '`&#39;` is an apostrophe',
      'npm run bench -- --ab e0d4a5d HEAD',
    ]) expect([line, caught(line)]).toEqual([line, false]);
  });
});
