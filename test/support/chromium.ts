import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (apt-get install -y chromium); CHROMIUM_PATH overrides. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * `describe`, or `describe.skip` with a loud message when there is no Chromium — except with
 * REQUIRE_CHROMIUM=1 (CI), where a missing browser is an error instead of a silent skip.
 */
export function describeWithChromium(what: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  if (process.env.REQUIRE_CHROMIUM === '1') throw new Error(`REQUIRE_CHROMIUM=1 but no Chromium at ${CHROMIUM}`);
  console.warn(`\n*** SKIPPING ${what}: no Chromium at ${CHROMIUM} (apt-get install -y chromium) ***\n`);
  return describe.skip;
}

/** Headless, sandbox off (root), and no background networking: this machine's network is closed. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
