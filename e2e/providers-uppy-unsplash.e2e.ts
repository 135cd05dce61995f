/**
 * Compatibility: Uppy's released `@uppy/unsplash` (with `@uppy/core`'s search-provider view and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Unsplash: no sign-in, its own search (`/search/unsplash/list?q=`), its results with the
 * photographer, its own picking, and the import through `POST /search/unsplash/get/{id}` and the
 * progress socket into `ferry`'s tus endpoint; stored bytes compared by sha256.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import { type RunningFakes, unsplashArgs } from './support/fakes.ts';
import type { RunningFerry } from './support/ferry.ts';
import { startUppyStack, type UppyStack } from './support/uppy-stack.ts';

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: Uppy's instance is driven from page scripts
    uppy: any;
  }
}

let stack: UppyStack | undefined;
let fakes: RunningFakes;
let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  stack = await startUppyStack('providers-uppy-unsplash', unsplashArgs);
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('@uppy/unsplash searches, shows the photographers, imports two photos through ferry, bytes exact', async () => {
  const u = fakes.fixture.unsplash;
  const page = await browser.context.newPage();
  const searches: string[] = [];
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.pathname.startsWith('/search/unsplash/')) searches.push(`${req.method()} ${url.pathname}${url.search}`);
  });
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  await page.getByRole('searchbox', { name: 'Enter text to search for images' }).fill('misty forest');
  await page.locator('.uppy-SearchProvider-searchButton').click();
  const picked = page.locator('label.uppy-ProviderBrowserItem-inner');
  await expect.poll(() => picked.count(), { timeout: 20_000 }).toBe(u.photos.length);
  // Uppy's item view links the photographer, from the `author` of each result.
  // (Uppy shows it on hover: read it from the page, not the accessibility tree.)
  await expect
    .poll(() => page.locator('a.uppy-ProviderBrowserItem-author').allTextContents())
    .toEqual(u.photos.map(() => 'Ada Lovelace'));

  for (const photo of u.photos)
    await page.locator(`label.uppy-ProviderBrowserItem-inner[aria-label="${photo.name}"]`).click();
  await page.getByRole('button', { name: `Select ${u.photos.length}` }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(u.photos.length);

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
  expect(out.done).toHaveLength(u.photos.length);
  for (const done of out.done as { name: string; url: string }[]) {
    expect(done.url).toMatch(new RegExp(`^${ferry.url}/files/`));
    const want = u.photos.find((f) => f.name === done.name);
    const stored = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, sha256: sha256Of(stored) }).toEqual({ name: want?.name, sha256: want?.sha256 });
  }
  expect(searches).toEqual([
    'GET /search/unsplash/list?q=misty%20forest',
    ...u.photos.map((p) => `POST /search/unsplash/get/${p.id}`).sort(),
  ]);
  await page.close();
}, 60_000);
