/**
 * Compatibility: Uppy's released `@uppy/facebook` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Facebook: its own sign-in (the popup to `/facebook/connect`, the fake's login dialog, the token
 * over the auth-callback socket), its own listing (the albums, then an album's photos in Uppy's
 * grid by their `requestPath`), its own picking, and the import through
 * `POST /facebook/get/{requestPath}` (the photo's largest rendition) and the progress socket into
 * `ferry`'s tus endpoint; stored bytes compared by sha256.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import { facebookArgs, type RunningFakes } from './support/fakes.ts';
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
  stack = await startUppyStack('providers-uppy-facebook', facebookArgs);
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('@uppy/facebook signs in, lists albums and an album, imports a photo through ferry, bytes exact', async () => {
  const f = fakes.fixture.facebook;
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  const popupOpened = page.waitForEvent('popup');
  await page
    .getByRole('button', { name: /Facebook/ })
    .first()
    .click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await popup.getByRole('button', { name: 'Continue as Fake Facebook User' }).click();
  // Uppy closes the popup once the socket delivered the token.
  await closed;

  const names = () => page.locator('.uppy-ProviderBrowserItem .uppy-truncate-text').allTextContents();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Summer trip', 'Profile pictures']));
  await expect.poll(() => page.getByText(f.email).count()).toBeGreaterThan(0);

  // Into the album (Uppy shows photos as a grid, named by aria-label), then pick two photos.
  await page.locator('.uppy-ProviderBrowserItem', { hasText: 'Summer trip' }).getByRole('button').first().click();
  const photo = (name: string) => page.locator(`label.uppy-ProviderBrowserItem-inner[aria-label="${name}"]`);
  await expect.poll(() => photo('Beach').count(), { timeout: 20_000 }).toBe(1);
  await photo('Beach').click();
  await photo('Sunset').click();
  await page.getByRole('button', { name: 'Select 2' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(2);

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
  expect(out.done).toHaveLength(2);
  for (const done of out.done as { name: string; url: string }[]) {
    expect(done.url).toMatch(new RegExp(`^${ferry.url}/files/`));
    const want = f.files.find((w) => w.name === done.name);
    const stored = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, size: stored.length, sha256: sha256Of(stored) }).toEqual({
      name: want?.name,
      size: want?.size,
      sha256: want?.sha256,
    });
  }
  await page.close();
}, 60_000);
