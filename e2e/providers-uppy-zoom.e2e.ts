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
import { expect, test } from 'vitest';
import { zoomArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-zoom', zoomArgs);

test('@uppy/zoom signs in, lists years, a year and a meeting, imports a recording through ferry, bytes exact', async () => {
  const z = stack.fakes.fixture.zoom;
  const video = z.files.find((f) => f.name.endsWith('.mp4'));
  expect(video).toBeDefined();
  const page = await uppy.openUppyPage(stack);
  await uppy.signInThroughPopup(page, /Zoom/, 'Allow Zoom access');

  const names = uppy.listedNames(page);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining([z.year]));
  await expect.poll(() => page.getByText(z.email).count()).toBeGreaterThan(0);

  // Into the year, then the meeting, each through its requestPath.
  await uppy.openFolder(page, z.year);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining([z.meeting]));
  await uppy.openFolder(page, z.meeting);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(z.files.map((f) => f.name)));
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: video?.name ?? '' }).click();
  await page.getByRole('button', { name: 'Select 1' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(1);

  await uppy.uploadAndCompare(page, stack, video ? [video] : []);
  await page.close();
}, 60_000);
