/**
 * Ferry's own Dashboard (the demo page, `providers: true`) with the sources beyond Drive and
 * Instagram, in real Chromium against the real `ferry` and the fakes (`ferry-fakes`, with a
 * folder "Many" of 1005 files so listings page): Dropbox, Box, and OneDrive with a SharePoint
 * library each show their button (from `GET /providers`), sign in through the popup, list, page
 * (scrolling loads the next page), show thumbnails, and import what was picked byte-exact into
 * `ferry`'s tus endpoint; Unsplash shows a search box (no sign-in), pages its results and imports
 * photos. Every stored file is compared by sha256 with what the fake serves. A listing the
 * provider rate-limits (the fakes' `too-many` switch) shows as a wait counting down on the page's
 * paused clock, then lists by itself.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { screenshot, statusText, storedWithMeta } from './support/dashboard.ts';
import {
  boxArgs,
  dropboxArgs,
  type FixtureFile,
  onedriveArgs,
  type RunningFakes,
  startFakes,
  startFerryWithProviders,
  unsplashArgs,
} from './support/fakes.ts';
import { type RunningFerry, repoRoot } from './support/ferry.ts';

/** Files in each provider's folder "Many": ferry lists up to 1000 per page, so two pages. */
const MANY = 1005;

let fakes: RunningFakes;
let ferry: RunningFerry;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  fakes = await startFakes(['--paging-items', String(MANY)]);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fakes?.stop();
});
beforeEach(async () => {
  // A fresh server (a fresh origin: the demo page keeps files across reloads) with the built page.
  const f = fakes.fixture;
  ferry = await startFerryWithProviders(fakes, [
    ...dropboxArgs(f),
    ...boxArgs(f),
    ...onedriveArgs(f),
    ...unsplashArgs(f),
    '--ui-dir',
    join(repoRoot, 'apps', 'demo', 'dist'),
  ]);
  page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
});
afterEach(async () => {
  await page?.close();
  await ferry?.stop();
});

const names = () => page.locator('.ferry-provider-name').allTextContents();
const check = (name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true });
const setSize = () => page.getByTestId('ferry-provider-item').first().getAttribute('aria-setsize');

function want(list: FixtureFile[], name: string): FixtureFile {
  const f = list.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture file ${name}`);
  return f;
}

/** Opens the provider's panel and signs in through the popup; `consent` acts on the provider's page. */
async function signIn(label: string, consent: (popup: Page) => Promise<void> = async () => {}) {
  await page.getByRole('button', { name: label, exact: true }).click();
  await expect.poll(() => page.getByText('Authorization required').count()).toBe(1);
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: `Connect to ${label}` }).click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await consent(popup);
  // The widget closes the popup once it has the token; a provider that authorizes at once can
  // get there before the close event is listened for.
  if (!popup.isClosed()) await closed;
  await expect.poll(() => page.getByRole('button', { name: 'Log out' }).count()).toBe(1);
}

const scrollTo = (where: 'top' | 'end') =>
  page.getByTestId('ferry-provider-items').evaluate((el, w) => {
    el.scrollTop = w === 'top' ? 0 : el.scrollHeight;
  }, where);

/** Back to the root through the breadcrumbs. */
const toRoot = (root: string) => page.locator('.ferry-crumb', { hasText: root }).click();

/**
 * Opens "Many", scrolls to its end so the second page loads, picks its last file, goes back up.
 * `firstPage`: what ferry asks the provider per page (1000; Graph allows 999).
 */
async function pageThroughMany(root: string, firstPage = 1000) {
  await page.getByRole('button', { name: 'Open folder Many' }).click();
  await expect.poll(setSize, { timeout: 20_000 }).toBe(String(firstPage));
  await scrollTo('end');
  await expect.poll(setSize, { timeout: 20_000 }).toBe(String(MANY));
  const last = `item-${String(MANY - 1).padStart(5, '0')}.txt`;
  await scrollTo('end');
  await check(last).check();
  await toRoot(root);
}

/** A thumbnail in the grid view loads as an image (through `ferry` or the provider's own link). */
async function thumbnailOf(name: string) {
  await page.getByRole('button', { name: 'Grid view' }).click();
  const img = page.getByTestId('ferry-provider-item').filter({ hasText: name }).locator('img');
  await expect.poll(() => img.count(), { timeout: 20_000 }).toBe(1);
  await expectImage(await img.getAttribute('src'));
  await page.getByRole('button', { name: 'List view' }).click();
}

/** `src` answers an image, as an `<img>` would load it (no headers: any grant is in the URL). */
async function expectImage(src: string | null) {
  const res = await fetch(new URL(src ?? '', ferry.url));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^image\//);
}

/** Adds the selection, uploads everything, and checks the stored bytes against `expected`. */
async function addUploadAndCompare(expected: { name: string; sha256: string }[]) {
  const add = page.getByRole('button', { name: `Add ${expected.length} files` });
  await expect.poll(() => add.count()).toBe(1);
  await add.click();
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(expected.length);
  await page.getByRole('button', { name: `Upload ${expected.length} files` }).click();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const stored = await storedWithMeta(ferry.dataDir);
  const byName = (a: { name?: string }, b: { name?: string }) => String(a.name).localeCompare(String(b.name));
  expect(stored.map((s) => ({ name: s.name, sha256: s.sha256 })).sort(byName)).toEqual(
    expected.map((f) => ({ name: f.name, sha256: f.sha256 })).sort(byName),
  );
}

const tiny = (name: string) => ({
  name,
  // The fakes' "Many" files are one byte: `x`.
  sha256: '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881',
});

test('Dropbox: sign in, list, page through 1005 files, thumbnails, import from a folder, the root and page 2', async () => {
  const d = fakes.fixture.dropbox;
  await signIn('Dropbox');
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(d.email);
  await expect.poll(names).toEqual(expect.arrayContaining(['Holiday', 'Many', 'report.pdf']));
  await pageThroughMany('Dropbox');
  await page.getByRole('button', { name: 'Open folder Holiday' }).click();
  await expect.poll(names).toEqual(['beach.jpg', 'notes.txt']);
  await thumbnailOf('beach.jpg');
  await check('beach.jpg').check();
  await toRoot('Dropbox');
  await check('report.pdf').check();
  await screenshot(page, 'providers-dropbox-selected');
  await addUploadAndCompare([want(d.files, 'beach.jpg'), want(d.files, 'report.pdf'), tiny('item-01004.txt')]);
});

test('Box: sign in on the consent page, list, page, thumbnails, import byte-exact', async () => {
  const b = fakes.fixture.box;
  await signIn('Box', (popup) => popup.getByRole('button', { name: 'Grant access to Box' }).click());
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(b.login);
  await expect.poll(names).toEqual(expect.arrayContaining(['Projects', 'Many', 'deck.pdf']));
  await pageThroughMany('Box');
  await page.getByRole('button', { name: 'Open folder Projects' }).click();
  await expect.poll(names).toEqual(expect.arrayContaining(['sketch.png', 'minutes.txt']));
  await thumbnailOf('sketch.png');
  await check('sketch.png').check();
  await toRoot('Box');
  await check('deck.pdf').check();
  await addUploadAndCompare([want(b.files, 'sketch.png'), want(b.files, 'deck.pdf'), tiny('item-01004.txt')]);
});

test('OneDrive: sign in, page, a SharePoint site and library, thumbnails, import byte-exact', async () => {
  const o = fakes.fixture.onedrive;
  await signIn('OneDrive');
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(o.mail);
  await expect.poll(names).toEqual(expect.arrayContaining(['Shared with me', 'SharePoint sites', 'Trips', 'Many']));
  await pageThroughMany('OneDrive', 999);
  await page.getByRole('button', { name: 'Open folder Trips' }).click();
  await expect.poll(names).toEqual(expect.arrayContaining(['alps.jpg', 'plan.txt']));
  await thumbnailOf('alps.jpg');
  await check('alps.jpg').check();
  await toRoot('OneDrive');
  for (const folder of ['SharePoint sites', 'Marketing', 'Documents']) {
    await page.getByRole('button', { name: `Open folder ${folder}` }).click();
    await expect.poll(names).not.toContain(folder);
  }
  await expect.poll(names).toEqual(['brand.pdf']);
  expect(await page.getByRole('navigation', { name: 'Breadcrumbs' }).textContent()).toBe(
    'OneDriveSharePoint sitesMarketingDocuments',
  );
  await check('brand.pdf').check();
  await addUploadAndCompare([want(o.files, 'alps.jpg'), want(o.files, 'brand.pdf'), tiny('item-01004.txt')]);
});

test('Unsplash: a search box without sign-in, results with attribution, the next page, photos imported byte-exact', async () => {
  const u = fakes.fixture.unsplash;
  await page.getByRole('button', { name: 'Unsplash', exact: true }).click();
  expect(await page.getByRole('button', { name: 'Connect to Unsplash' }).count()).toBe(0);
  await page.getByRole('searchbox', { name: 'Search Unsplash' }).fill('forest');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  // Any query finds every photo of the fake: the two named ones and the "Many" ones, 30 a page.
  await expect.poll(setSize, { timeout: 20_000 }).toBe('30');
  await expect.poll(() => page.getByRole('link', { name: 'by Ada Lovelace' }).count()).toBeGreaterThan(0);
  await expectImage(await page.getByTestId('ferry-provider-item').first().locator('img').getAttribute('src'));
  await scrollTo('end');
  await expect.poll(setSize, { timeout: 20_000 }).toBe('60');
  await scrollTo('top');
  const photos = u.photos.map((p) => ({ name: p.name, sha256: p.sha256 }));
  for (const p of photos) await check(p.name).check();
  await addUploadAndCompare(photos);
});

test('a rate-limited listing waits, "Waiting for Dropbox… retrying in 12 s" counting down, then lists by itself', async () => {
  await signIn('Dropbox');
  await expect.poll(names).toContain('Holiday');
  // The page's clock from here on: the 12 s pass when the test says so.
  await page.clock.install();
  // Longer than ferry waits itself (10 s at most), so ferry answers 429 with Retry-After: 12.
  await fakes.fault('too-many dropbox 1 12');
  await page.getByRole('button', { name: 'Open folder Holiday' }).click();
  const waiting = page.getByTestId('ferry-provider-waiting');
  await expect.poll(() => waiting.textContent()).toBe('Waiting for Dropbox… retrying in 12 s');
  const live = page.locator('.ferry-provider div.ferry-visually-hidden[aria-live="polite"]');
  expect(await live.textContent()).toBe('Waiting for Dropbox… retrying in 12 s');
  // A wait, not an error.
  expect(await page.locator('.ferry-provider [role="alert"]').count()).toBe(0);
  await page.clock.runFor(3000);
  await expect.poll(() => waiting.textContent()).toBe('Waiting for Dropbox… retrying in 9 s');
  expect(await live.textContent()).toBe('Waiting for Dropbox… retrying in 12 s');
  await page.clock.runFor(9000);
  await expect.poll(names).toEqual(['beach.jpg', 'notes.txt']);
  expect(await waiting.count()).toBe(0);
  expect(await live.textContent()).toBe('');
});
