/**
 * Ferry's own Dashboard (the demo page, `providers: true`) with Zoom and Facebook, in real
 * Chromium against the real `ferry` and the fakes (`ferry-fakes`): each shows its button (from
 * `GET /providers`), signs in on the provider's consent page in the popup, lists through the
 * generic provider browser (Zoom: a year, a meeting, its recordings; Facebook: albums, then an
 * album's photos) and imports what was picked into `ferry`'s tus endpoint; every stored file is
 * compared by sha256 with what the fake serves.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import {
  addUploadAndCompare,
  check,
  names,
  openFolder,
  signIn,
  startDemoFerry,
  want,
} from './support/dashboard-providers.ts';
import { facebookArgs, type RunningFakes, startFakes, zoomArgs } from './support/fakes.ts';
import type { RunningFerry } from './support/ferry.ts';

let fakes: RunningFakes;
let ferry: RunningFerry;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  fakes = await startFakes();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fakes?.stop();
});
beforeEach(async () => {
  // A fresh server (a fresh origin: the demo page keeps files across reloads).
  ferry = await startDemoFerry(fakes, [...zoomArgs(fakes.fixture), ...facebookArgs(fakes.fixture)]);
  page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
});
afterEach(async () => {
  await page?.close();
  await ferry?.stop();
});

test('Zoom: sign in, open a year and a meeting, import its recording and transcript byte-exact', async () => {
  const z = fakes.fixture.zoom;
  await signIn(page, 'Zoom', (popup) => popup.getByRole('button', { name: 'Allow Zoom access' }).click());
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(z.email);
  await expect.poll(() => names(page)).toContain(z.year);
  await openFolder(page, z.year);
  await expect.poll(() => names(page)).toContain(z.meeting);
  await openFolder(page, z.meeting);
  await expect.poll(() => names(page)).toEqual(expect.arrayContaining(z.files.map((f) => f.name)));
  expect(await page.getByRole('navigation', { name: 'Breadcrumbs' }).textContent()).toBe(`Zoom${z.year}${z.meeting}`);
  for (const f of z.files) await check(page, f.name).check();
  await addUploadAndCompare(page, ferry, z.files);
});

test('Facebook: sign in, open an album, import two photos byte-exact', async () => {
  const f = fakes.fixture.facebook;
  await signIn(page, 'Facebook', (popup) =>
    popup.getByRole('button', { name: 'Continue as Fake Facebook User' }).click(),
  );
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(f.email);
  await expect.poll(() => names(page)).toEqual(expect.arrayContaining(['Summer trip', 'Profile pictures']));
  await openFolder(page, 'Summer trip');
  await expect.poll(() => names(page)).toEqual(expect.arrayContaining(['Beach', 'Sunset']));
  await check(page, 'Beach').check();
  await check(page, 'Sunset').check();
  await addUploadAndCompare(page, ferry, [want(f.files, 'Beach'), want(f.files, 'Sunset')]);
});
