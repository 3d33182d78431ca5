/**
 * MCP's own conformance runner (`@modelcontextprotocol/conformance`, pinned to 0.1.13, the last
 * release that runs on Node 20; a devDependency, so CI needs only the npm registry) against a
 * live app: initialize, tools/list, ping and DNS-rebinding protection.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestApp } from '../support/rpc-test-app.js';
import { startMcpApp } from './support/mcp-test-app.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const runner = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** Runs one scenario without blocking this process (the app answers from it). */
function conformance(url: string, scenario: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [runner, 'server', '--url', url, '--scenario', scenario], { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

describe('MCP conformance runner 0.1.13 against POST /mcp', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startMcpApp();
  });
  afterAll(() => t.close());

  it('runs the pinned 0.1.13 (later releases need Node 22)', () => {
    expect(JSON.parse(readFileSync(join(root, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8')).version).toBe('0.1.13');
  });

  it.each(['server-initialize', 'tools-list', 'ping', 'dns-rebinding-protection'])('passes %s', async (scenario) => {
    const { code, output } = await conformance(`${t.url}/mcp`, scenario);
    expect(output).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(code).toBe(0);
  }, 90_000);
});
