/**
 * MCP's official conformance runner, as `npm run conformance:mcp` runs it (scripts/mcp-conformance.mjs):
 * @modelcontextprotocol/conformance 0.2.0-alpha.12 against the fixture app of test/mcp/conformance,
 * the frozen requirement sets of both wire versions (2025-11-25, 2026-07-28) and every scenario of
 * the Tasks extension. A scored failure that test/mcp/conformance/expected-failures-*.yaml does not
 * list (features the module does not offer), or a listed one that passes, fails this test. The
 * fixture runs on this jest project's platform (Fastify, or Express in the Express project). Needs
 * the built packages (`npm test` builds first).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_PLATFORM } from '../support/rpc-test-app.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

function runScript(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, RPC_TEST_PLATFORM: TEST_PLATFORM };
    const child = spawn(process.execPath, [join(root, 'scripts/mcp-conformance.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('MCP conformance (npm run conformance:mcp)', () => {
  it('runs the pinned 0.2.0-alpha.12', () => {
    expect(JSON.parse(readFileSync(join(root, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8')).version).toBe('0.2.0-alpha.12');
  });

  it(`passes both requirement sets (features not offered excepted) and the Tasks extension scenarios, on ${TEST_PLATFORM}`, async () => {
    const { code, output } = await runScript();
    const verdicts = output.slice(output.indexOf('=== MCP conformance ===')).split('\n').filter((line) => /^(PASS|FAIL) /.test(line));
    try {
      expect(output).toMatch(new RegExp(`Fixture on http://127\\.0\\.0\\.1:\\d+/mcp \\(${TEST_PLATFORM}\\)`));
      expect(verdicts).toEqual([
        'PASS  requirements 2025-11-25',
        'PASS  requirements 2026-07-28',
        ...['lifecycle', 'capability-negotiation', 'wire-fields', 'request-state-removal', 'mrtr-input', 'request-headers', 'dispatch-and-envelope', 'status-notifications', 'required-task-error', 'mrtr-composition'].map(
          (s) => `PASS  tasks: tasks-${s}`,
        ),
      ]);
      expect(code).toBe(0);
    } catch (error) {
      if (error instanceof Error) error.message += `\n--- conformance output ---\n${output}`;
      throw error;
    }
  }, 900_000);
});
