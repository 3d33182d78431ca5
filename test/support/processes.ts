import { spawn, type SpawnOptions } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';

export interface Finished {
  /** stdout and stderr interleaved as they came, colours stripped. */
  readonly output: string;
}

/**
 * Runs a command to completion without blocking the event loop (the test process serves the local
 * registry those commands install from). Rejects with the command's output when it exits non-zero.
 */
export function run(command: string, args: readonly string[], options: SpawnOptions & { cwd: string }): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const clean = stripVTControlCharacters(output);
      if (code === 0) resolve({ output: clean });
      else reject(new Error(`\`${command} ${args.join(' ')}\` in ${options.cwd} exited with ${code ?? signal}:\n${clean}`));
    });
  });
}
