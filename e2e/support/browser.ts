/** Debian's Chromium driven by playwright-core, with the flags this machine needs. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** The flags this machine's Chromium needs (headless, no sandbox, no GPU, no background traffic). */
export function chromiumFlags(options: { fakeMedia?: boolean } = {}): string[] {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (options.fakeMedia) args.push('--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream');
  return args;
}

export async function launchBrowser(options: { fakeMedia?: boolean } = {}): Promise<Browser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'ferry-chromium-'));
  const args = chromiumFlags(options);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Clears everything `origin` stored in the browser (IndexedDB, OPFS, localStorage...). The demo
 * page keeps files across reloads (recovery), so specs that share one profile start each test
 * from a clean origin.
 */
export async function clearSiteData(context: BrowserContext, origin: string): Promise<void> {
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
  await cdp.detach();
}
