/**
 * Compatibility: Uppy's released `@uppy/zoom` (with `@uppy/core`'s provider views and companion
 * client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake Zoom: its
 * own sign-in (the popup to `/zoom/connect`, the fake's consent page, the token over the
 * auth-callback socket), its own listing (the root's years, a year's meetings, a meeting's
 * recording files, each by its `requestPath`; the meeting's UUID starts with `/` and holds `//`),
 * its own picking, and the import through `POST /zoom/get/{requestPath}` (the file's download URL
 * and Zoom's storage redirect) and the progress socket into `ferry`'s tus endpoint; stored bytes
 * compared by sha256.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import { type RunningFakes, zoomArgs } from './support/fakes.ts';
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
  stack = await startUppyStack('providers-uppy-zoom', zoomArgs);
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('@uppy/zoom signs in, lists years, a year and a meeting, imports a recording through ferry, bytes exact', async () => {
  const z = fakes.fixture.zoom;
  const video = z.files.find((f) => f.name.endsWith('.mp4'));
  expect(video).toBeDefined();
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: /Zoom/ }).first().click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await popup.getByRole('button', { name: 'Allow Zoom access' }).click();
  // Uppy closes the popup once the socket delivered the token.
  await closed;

  const names = () => page.locator('.uppy-ProviderBrowserItem .uppy-truncate-text').allTextContents();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining([z.year]));
  await expect.poll(() => page.getByText(z.email).count()).toBeGreaterThan(0);

  // Into the year, then the meeting, each through its requestPath.
  await page.locator('.uppy-ProviderBrowserItem', { hasText: z.year }).getByRole('button').first().click();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining([z.meeting]));
  await page.locator('.uppy-ProviderBrowserItem', { hasText: z.meeting }).getByRole('button').first().click();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(z.files.map((f) => f.name)));
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: video?.name ?? '' }).click();
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
    const stored = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, size: stored.length, sha256: sha256Of(stored) }).toEqual({
      name: video?.name,
      size: video?.size,
      sha256: video?.sha256,
    });
  }
  await page.close();
}, 60_000);
