/**
 * The stack behind the specs that drive Uppy's released provider plugins
 * (`providers-uppy*.e2e.ts`): the spec's page in `e2e/pages/{name}` built with Vite and served by
 * `ferry` (`--ui-dir`) beside the provider fakes, with the provider's flags, and Chromium
 * (`useUppyStack` starts it around a spec file); and the steps those specs share: opening the
 * page once Uppy is ready, the sign-in popup, the provider view's names and folders, and the
 * upload whose stored bytes are compared with the fixture's by sha256.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Browser, launchBrowser } from './browser.ts';
import { sha256Of } from './core-page.ts';
import { type Fixture, type RunningFakes, startFakes, startFerryWithProviders } from './fakes.ts';
import type { RunningFerry } from './ferry.ts';

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: Uppy's instance is driven from page scripts
    uppy: any;
  }
}

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

/** The stack of one spec file: read its parts inside tests (they exist once `beforeAll` ran). */
export interface UppyStackRef {
  readonly fakes: RunningFakes;
  readonly ferry: RunningFerry;
  readonly browser: Browser;
}

/** Starts the stack of `pages/{pageName}` before the spec file's tests and stops it after them. */
export function useUppyStack(pageName: string, providerArgs?: (fixture: Fixture) => string[]): UppyStackRef {
  let stack: UppyStack | undefined;
  beforeAll(async () => {
    stack = await startUppyStack(pageName, providerArgs);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });
  const started = () => {
    if (!stack) throw new Error(`the ${pageName} stack is not running (read it inside a test)`);
    return stack;
  };
  return {
    get fakes() {
      return started().fakes;
    },
    get ferry() {
      return started().ferry;
    },
    get browser() {
      return started().browser;
    },
  };
}

/**
 * A new page at `path` of the app `ferry` serves, once the page says Uppy is ready; `prepare`
 * runs on the page before it loads (routes, listeners).
 */
export async function openUppyPage(
  stack: UppyStackRef,
  path = '/',
  prepare?: (page: Page) => Promise<void> | void,
): Promise<Page> {
  const page = await stack.browser.context.newPage();
  await prepare?.(page);
  await page.goto(`${stack.ferry.url}${path}`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  return page;
}

/**
 * Signs in as the plugin does: its button (`button`, the first that matches) opens the popup to
 * `/{p}/connect`; `consent` names the fake's consent button to press there (none: the fake
 * grants at once). Uppy closes the popup once the auth-callback socket delivered the token.
 */
export async function signInThroughPopup(page: Page, button: string | RegExp, consent?: string): Promise<void> {
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: button }).first().click();
  const popup = await popupOpened;
  if (consent) {
    const closed = popup.waitForEvent('close');
    await popup.getByRole('button', { name: consent }).click();
    await closed;
  } else if (!popup.isClosed()) {
    // Granted at once: the popup can close before the close event is listened for.
    await popup.waitForEvent('close');
  }
}

/** The names the provider view lists now (for `expect.poll`). */
export function listedNames(page: Page): () => Promise<string[]> {
  return () => page.locator('.uppy-ProviderBrowserItem .uppy-truncate-text').allTextContents();
}

/** Opens the listed folder `name` (Uppy asks for it by its `requestPath`). */
export async function openFolder(page: Page, name: string): Promise<void> {
  await page.locator('.uppy-ProviderBrowserItem', { hasText: name }).getByRole('button').first().click();
}

/** A file an upload must store: its name and sha256, and its size where the fixture knows it. */
export interface Expected {
  name: string;
  sha256: string;
  size?: number;
}

/**
 * Uploads every file Uppy holds: none fails, `count` succeed, and each is stored in ferry's tus
 * endpoint with the name, size and sha256 of the file of `want` by that name. The uploads.
 */
export async function uploadAndCompare(
  page: Page,
  stack: UppyStackRef,
  want: Expected[],
  count = want.length,
): Promise<{ name: string; url: string }[]> {
  const out = await page.evaluate(async () => {
    const result = await window.uppy.upload();
    return {
      failed: (result.failed ?? []).map((f: { error?: unknown }) => String(f.error)),
      done: (result.successful ?? []).map((f: { name: string; uploadURL: string }) => ({
        name: f.name,
        url: f.uploadURL,
      })),
    };
  });
  expect(out.failed).toEqual([]);
  expect(out.done).toHaveLength(count);
  const done = out.done as { name: string; url: string }[];
  for (const d of done) {
    expect(d.url).toMatch(new RegExp(`^${stack.ferry.url}/files/`));
    const file = want.find((f) => f.name === d.name);
    const stored = new Uint8Array(await (await fetch(d.url)).arrayBuffer());
    const got: Expected = { name: d.name, sha256: sha256Of(stored) };
    if (file?.size !== undefined) got.size = stored.length;
    expect(got).toEqual({ name: file?.name, size: file?.size, sha256: file?.sha256 });
  }
  return done;
}
