// The public surface of the published packages, as API reports checked in under etc/
// (@microsoft/api-extractor over each package's built typings, dist/index.d.ts: build first).
//
//   node scripts/api-report.mjs            checks: fails, printing the difference, when a surface
//                                          differs from its report (test/architecture/api-report.spec.ts)
//   node scripts/api-report.mjs --update   writes the reports: do this on purpose, and review the diff
//
// See docs/api-surface.md for what belongs in a surface and how to change one.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The packages with a report: the report's name, the package's folder. */
const PACKAGES = [
  { report: 'server', dir: 'libs/server' },
  { report: 'protocol', dir: 'libs/protocol' },
  { report: 'client', dir: 'libs/client' },
];
const update = process.argv.includes('--update');

let failed = false;
for (const { report, dir } of PACKAGES) {
  const projectFolder = join(root, dir);
  const entry = join(projectFolder, 'dist/index.d.ts');
  if (!existsSync(entry)) {
    console.error(`${dir}: ${entry} is missing; run npm run build first`);
    failed = true;
    continue;
  }
  const config = ExtractorConfig.prepare({
    configObjectFullPath: join(projectFolder, 'api-extractor.json'),
    packageJsonFullPath: join(projectFolder, 'package.json'),
    configObject: {
      projectFolder,
      mainEntryPointFilePath: '<projectFolder>/dist/index.d.ts',
      bundledPackages: [],
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], skipLibCheck: true },
          files: ['dist/index.d.ts'],
        },
      },
      apiReport: { enabled: true, reportFileName: report, reportFolder: join(root, 'etc'), reportTempFolder: join(projectFolder, 'dist/api-report') },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // Reported in the report itself (a type reachable from the surface but not exported is a
        // finding to read there), never a failure of their own: the check is the report's text.
        // The typings' own validity is the pack test's (test/pack: an app type-checks against them).
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'none', addToApiReportFile: true },
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          // Its notes carry line numbers of the built typings, which move with any comment.
          'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
      },
    },
  });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false, messageCallback: (m) => {
    if (m.logLevel === 'warning' || m.logLevel === 'error') console.error(`${dir}: ${m.text}`);
    m.handled = true;
  } });
  if (update) {
    console.log(`${dir}: etc/${report}.api.md ${result.apiReportChanged ? 'updated' : 'unchanged'}`);
  } else if (result.apiReportChanged || !result.succeeded) {
    failed = true;
    const reportFile = join(root, 'etc', `${report}.api.md`);
    const written = join(projectFolder, 'dist/api-report', `${report}.api.md`);
    console.error(
      `${dir}: the public surface differs from etc/${report}.api.md` +
        (existsSync(reportFile) ? '' : ' (no report checked in)') +
        `. If the change is meant, run \`node scripts/api-report.mjs --update\` and commit the report (docs/api-surface.md).` +
        (existsSync(written) ? `\nThe surface as built: ${written}` : ''),
    );
    if (existsSync(reportFile) && existsSync(written)) printDifference(readFileSync(reportFile, 'utf8'), readFileSync(written, 'utf8'));
  }
}
process.exit(failed ? 1 : 0);

/** The lines only in one side, in order: enough to see what changed without a diff tool. */
function printDifference(before, after) {
  const was = new Set(before.split('\n'));
  const now = new Set(after.split('\n'));
  for (const line of before.split('\n')) if (!now.has(line)) console.error(`- ${line}`);
  for (const line of after.split('\n')) if (!was.has(line)) console.error(`+ ${line}`);
}
