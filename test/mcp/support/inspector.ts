import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { nodeReleaseHome } from '../../../.ci/node-release.mjs';
import { toolEnv } from '../../schematics/support/toolchain.js';

/** The Inspector release the tests drive (pinned: what it validates must not change under us). */
export const INSPECTOR_VERSION = '2.12.0';

export interface InspectorRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Inspector {
  /** Runs `mcp-inspector --cli <args…>` to completion. */
  cli(args: readonly string[]): Promise<InspectorRun>;
}

/**
 * The MCP Inspector CLI as a user runs it. It needs Node >= 22.19 and pulls a web UI toolchain
 * (vite, react) that `npm ci` on Node 20 should not install, so it is not a dev dependency: it is
 * installed from the npm registry with the cached Node 24 (.ci/node-release.mjs, the one the CI's
 * second pass uses) into node_modules/.cache on first use, and reused afterwards.
 */
export function prepareInspector(root: string): Promise<Inspector> {
  const env = toolEnv(nodeReleaseHome(root, 24));
  const cache = join(root, 'node_modules/.cache/nest-jsonrpc-mcp-inspector');
  const home = join(cache, INSPECTOR_VERSION);
  const bin = join(home, 'node_modules/.bin/mcp-inspector');
  const ready = existsSync(bin)
    ? Promise.resolve()
    : (async () => {
        // Installed beside, then renamed into place: a run killed halfway leaves nothing that looks installed.
        const staging = join(cache, `staging-${process.pid}`);
        rmSync(staging, { recursive: true, force: true });
        mkdirSync(staging, { recursive: true });
        const install = await exec('npm', ['install', '--prefix', staging, '--no-save', '--loglevel=error', `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`], staging, env, 300_000);
        if (install.code !== 0) throw new Error(`installing the MCP Inspector failed:\n${install.stdout}${install.stderr}`);
        // Both jest projects prepare it at once on a fresh clone. The rename is atomic and refuses
        // a non-empty target, so the first to finish installs it and the other keeps that copy:
        // removing it would pull the binary from under the first one's tests.
        try {
          renameSync(staging, home);
        } catch (error) {
          if (existsSync(bin)) return rmSync(staging, { recursive: true, force: true });
          if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          // Something that is not an install sits there (an older layout): replace it.
          rmSync(home, { recursive: true, force: true });
          renameSync(staging, home);
        }
      })();
  return ready.then(() => ({ cli: (args) => exec(bin, ['--cli', ...args], home, env, 60_000) }));
}

function exec(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, timeout: number): Promise<InspectorRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: stripVTControlCharacters(stdout), stderr: stripVTControlCharacters(stderr) }));
  });
}
