/**
 * Compatibility: Uppy's released `@uppy/onedrive` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Microsoft: its own sign-in (the popup to `/onedrive/connect`, PKCE, the token over the
 * auth-callback socket), its own listing (the top level with "SharePoint sites", a site, its
 * document library), its own picking, and the import through `POST /onedrive/get/{requestPath}`
 * (Graph's content redirect) and the progress socket into `ferry`'s tus endpoint; stored bytes
 * compared by sha256.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import { onedriveArgs, type RunningFakes } from './support/fakes.ts';
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
  stack = await startUppyStack('providers-uppy-onedrive', onedriveArgs);
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('@uppy/onedrive signs in, opens a SharePoint library and imports a file from it through ferry, bytes exact', async () => {
  const o = fakes.fixture.onedrive;
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  const popupOpened = page.waitForEvent('popup');
  await page
    .getByRole('button', { name: /OneDrive/ })
    .first()
    .click();
  const popup = await popupOpened;
  // The fake authorizes at once; Uppy closes the popup once the socket delivered the token,
  // which can be before the close event is listened for.
  if (!popup.isClosed()) await popup.waitForEvent('close');

  const names = () => page.locator('.uppy-ProviderBrowserItem .uppy-truncate-text').allTextContents();
  await expect
    .poll(names, { timeout: 20_000 })
    .toEqual(expect.arrayContaining(['Shared with me', 'SharePoint sites', 'Trips']));
  await expect.poll(() => page.getByText(o.mail).count()).toBeGreaterThan(0);

  for (const folder of ['SharePoint sites', 'Marketing', 'Documents']) {
    await page.locator('.uppy-ProviderBrowserItem', { hasText: folder }).getByRole('button').first().click();
    if (folder !== 'Documents') {
      await expect.poll(names, { timeout: 20_000 }).not.toContain(folder);
    }
  }
  await expect.poll(names, { timeout: 20_000 }).toEqual(['brand.pdf']);
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'brand.pdf' }).click();
  await page.getByRole('button', { name: 'Select 1' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(1);

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
  expect(out.done).toHaveLength(1);
  for (const done of out.done as { name: string; url: string }[]) {
    expect(done.url).toMatch(new RegExp(`^${ferry.url}/files/`));
    const want = o.files.find((f) => f.name === done.name);
    const stored = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, size: stored.length, sha256: sha256Of(stored) }).toEqual({
      name: want?.name,
      size: want?.size,
      sha256: want?.sha256,
    });
  }
  await page.close();
}, 60_000);
