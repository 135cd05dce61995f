/**
 * The stack behind the specs that drive Uppy's released provider plugins
 * (`providers-uppy*.e2e.ts`): the spec's page in `e2e/pages/{name}` built with Vite and served by
 * `ferry` (`--ui-dir`) beside the provider fakes, with the provider's flags, and Chromium.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { type Browser, launchBrowser } from './browser.ts';
import { type Fixture, type RunningFakes, startFakes, startFerryWithProviders } from './fakes.ts';
import type { RunningFerry } from './ferry.ts';

export interface UppyStack {
  fakes: RunningFakes;
  ferry: RunningFerry;
  browser: Browser;
  /** Stops what was started, last first, and removes the built page. */
  stop(): Promise<void>;
}

/** Builds `pages/{pageName}`, starts the fakes, `ferry` with `providerArgs` and Chromium. */
export async function startUppyStack(
  pageName: string,
  providerArgs: (fixture: Fixture) => string[] = () => [],
): Promise<UppyStack> {
  const dir = await mkdtemp(join(tmpdir(), `ferry-${pageName}-`));
  const stops: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    await build({
      root: resolve(import.meta.dirname, '..', 'pages', pageName),
      logLevel: 'error',
      configFile: false,
      build: { outDir: dir, emptyOutDir: true, minify: false },
    });
    const fakes = await startFakes();
    stops.push(() => fakes.stop());
    const ferry = await startFerryWithProviders(fakes, [...providerArgs(fakes.fixture), '--ui-dir', dir]);
    stops.push(() => ferry.stop());
    const browser = await launchBrowser();
    stops.push(() => browser.close());
    return { fakes, ferry, browser, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
