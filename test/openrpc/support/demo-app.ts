/**
 * The demo app (apps/demo) exactly as `npm start` wires it, on 127.0.0.1:0, with the offline chat
 * model (no network), and a token for alice (roles user and admin), who may call every method.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../../../apps/demo/src/app.module.js';
import { startTestApp, type TestApp } from '../../support/rpc-test-app.js';

const LLM_ENV = ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

export interface DemoApp extends TestApp {
  /** `Authorization: Bearer <alice's token>`. */
  alice: Record<string, string>;
}

export async function startDemoApp(): Promise<DemoApp> {
  const saved = Object.fromEntries(LLM_ENV.map((name) => [name, process.env[name]]));
  for (const name of LLM_ENV) delete process.env[name];
  process.env.LLM_PROVIDER = 'offline';
  // The demo keeps durable streams in ./data (SQLite). Each instance gets its own directory: a
  // demo booting in a parallel suite would otherwise mark this one's running streams interrupted
  // (startup recovery). The file is opened (and its path resolved) while the app starts.
  const dataDir = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-demo-'));
  const cwd = process.cwd();
  let t: TestApp;
  try {
    process.chdir(dataDir);
    t = await startTestApp(AppModule);
  } finally {
    process.chdir(cwd);
    for (const name of LLM_ENV) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
  const close = t.close;
  t.close = async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const login = await t.rpc({ jsonrpc: '2.0', method: 'auth.login', params: { username: 'alice', password: 'alice-pw' }, id: 1 });
  const token = login.body?.result?.token;
  if (typeof token !== 'string') throw new Error(`auth.login failed: ${JSON.stringify(login.body)}`);
  return Object.assign(t, { alice: { authorization: `Bearer ${token}` } });
}
