/**
 * The Dashboard's cloud-provider panels in real Chromium against the real `ferry` and the fake
 * Google and Instagram (`ferry-fakes`): the person signs in through the provider's page in the
 * popup (the token comes back over the auth socket or `postMessage`, whichever the widget gets
 * first), browses, picks, and uploads; `ferry` fetches the bytes from the fake and stores them
 * in its own tus endpoint. Every stored file is compared by sha256 with what the fake serves
 * (the export bytes for a Google Doc), with its name, and the files' progress must reach 100%.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { screenshot, statusText, storedWithMeta } from './support/dashboard.ts';
import { type FixtureFile, type RunningFakes, startFakes, startFerryWithProviders } from './support/fakes.ts';
import { type RunningFerry, repoRoot } from './support/ferry.ts';

let fakes: RunningFakes;
let ferry: RunningFerry;
let browser: Browser;
let page: Page;
/** The bodies of the page's `POST /{provider}/get/{requestPath}` requests. */
let gets: { path: string; body: Record<string, unknown> }[];

beforeAll(async () => {
  fakes = await startFakes();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fakes?.stop();
});
beforeEach(async () => {
  // The freshly built page (npm run build), whatever the binary embeds.
  ferry = await startFerryWithProviders(fakes, ['--ui-dir', join(repoRoot, 'apps', 'demo', 'dist')]);
  page = await browser.context.newPage();
  gets = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (req.method() === 'POST' && /^\/(drive|instagram)\/get\//.test(path)) {
      gets.push({ path, body: JSON.parse(req.postData() ?? '{}') as Record<string, unknown> });
    }
  });
  await page.goto(`${ferry.url}/`);
});
afterEach(async () => {
  await page?.close();
  await ferry?.stop();
});

function fixtureFile(list: FixtureFile[], name: string): FixtureFile {
  const f = list.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture file ${name}`);
  return f;
}

/** Opens the provider's panel and signs in through the popup; `consent` acts on the provider's page. */
async function signIn(label: string, consent: (popup: Page) => Promise<void>): Promise<void> {
  await page.getByRole('button', { name: label, exact: true }).click();
  await expect.poll(() => page.getByText('Authorization required').count()).toBe(1);
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: `Connect to ${label}` }).click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await consent(popup);
  // The widget closes the popup once it has the token.
  await closed;
  await expect.poll(() => page.getByRole('button', { name: 'Log out' }).count()).toBe(1);
}

const check = (name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true });

/** Uploads everything and waits for the status bar to say so; returns the files' final progress. */
async function uploadAll(count: number) {
  await page.getByRole('button', { name: `Upload ${count} file${count === 1 ? '' : 's'}` }).click();
  await expect.poll(() => statusText(page), { timeout: 45_000 }).toBe('Complete');
  return page.evaluate(() =>
    (window.ferry?.getFiles() ?? []).map((f) => ({
      name: f.name,
      percentage: f.progress.percentage,
      complete: f.progress.uploadComplete,
      state: f.state,
    })),
  );
}

test('Google Drive: sign in on the consent page, browse, pick a folder, a Google Doc and a file, upload byte-exact', async () => {
  const g = fakes.fixture.google;
  await signIn('Google Drive', async (popup) => {
    // The fake's consent page: the person allows access.
    await popup.getByRole('button', { name: 'Allow' }).click();
  });
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(g.email);

  // The root: My Drive's items plus the virtual Shared with me folder and the shared drive.
  const names = () => page.locator('.ferry-provider-name').allTextContents();
  await expect.poll(names).toEqual(expect.arrayContaining(['Holiday', 'Plan.docx', 'report.pdf', 'Shared with me']));
  // A form has no downloadable form: listed, but cannot be picked.
  await expect.poll(() => check('Survey').isDisabled()).toBe(true);

  // Browse into the folder and back through the breadcrumbs.
  await page.getByRole('button', { name: 'Open folder Holiday' }).click();
  await expect.poll(names).toEqual(['beach.jpg', 'clip.mp4', 'notes.txt']);
  await page.locator('.ferry-crumb').first().click();
  await expect.poll(names).toContain('Plan.docx');

  await check('Holiday').check();
  await check('Plan.docx').check();
  await check('report.pdf').check();
  // The folder counts its three files.
  await expect.poll(() => page.getByRole('button', { name: 'Add 5 files' }).count()).toBe(1);
  await screenshot(page, 'providers-drive-selected');
  await page.getByRole('button', { name: 'Add 5 files' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(5);

  const progress = await uploadAll(5);
  expect(progress.map((p) => [p.name, p.percentage, p.complete, p.state]).sort()).toEqual(
    ['Plan.docx', 'beach.jpg', 'clip.mp4', 'notes.txt', 'report.pdf'].map((n) => [n, 100, true, 'complete']),
  );

  const expected = ['beach.jpg', 'notes.txt', 'clip.mp4', 'Plan.docx', 'report.pdf'].map((n) =>
    fixtureFile(g.files, n),
  );
  const stored = await storedWithMeta(ferry.dataDir);
  const byName = (a: { name?: string }, b: { name?: string }) => String(a.name).localeCompare(String(b.name));
  expect(stored.map((s) => ({ name: s.name, size: s.size, sha256: s.sha256 })).sort(byName)).toEqual(
    expected.map((f) => ({ name: f.name, size: f.size, sha256: f.sha256 })).sort(byName),
  );
  // Files found under the folder keep where they were.
  expect(
    stored
      .filter((s) => s.relativePath)
      .map((s) => s.relativePath)
      .sort(),
  ).toEqual(['Holiday/beach.jpg', 'Holiday/clip.mp4', 'Holiday/notes.txt']);
  // Companion's wire: `fileId` in the /get body is the provider's id of the file, as released
  // Uppy clients send it, not the engine's.
  expect(gets.map((r) => r.body.fileId).sort()).toEqual(expected.map((f) => f.id).sort());
});

test('Instagram: sign in, see recent, pick an image and a carousel child, upload byte-exact', async () => {
  const ig = fakes.fixture.instagram;
  // Instagram's page approves at once (the fake has no consent step): the popup just closes.
  await signIn('Instagram', async () => {});
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toBe(ig.username);
  // The root is `recent`: every medium, carousel children flattened in, is listed.
  const listedIds = () =>
    page.evaluate(() => (window.ferry?.providers.browser('instagram').getState().items ?? []).map((i) => i.id));
  await expect.poll(listedIds).toEqual(expect.arrayContaining(ig.media.map((m) => m.id)));

  const image = fixtureFile(ig.media, 'image');
  const child = fixtureFile(ig.media, 'album image 2');
  // Items are named by the provider; pick by id through the list's data, then by its label.
  const items = await page.evaluate(() => {
    const b = window.ferry?.providers.browser('instagram');
    return (b?.getState().items ?? []).map((i) => ({ id: i.id, name: i.name }));
  });
  const want = [image.id, child.id].map((id) => {
    const item = items.find((i) => i.id === id);
    if (!item) throw new Error(`media ${id} not listed in recent: ${JSON.stringify(items)}`);
    return item.name;
  });
  // Carousel children are flattened into the list, so the album's second image is there too.
  for (const name of want) await check(name).check();
  await expect.poll(() => page.getByRole('button', { name: 'Add 2 files' }).count()).toBe(1);
  await page.getByRole('button', { name: 'Add 2 files' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(2);

  const progress = await uploadAll(2);
  expect(progress.map((p) => [p.percentage, p.complete])).toEqual([
    [100, true],
    [100, true],
  ]);
  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.map((s) => s.sha256).sort()).toEqual([image.sha256, child.sha256].sort());
  expect(stored.map((s) => s.name).sort()).toEqual([...want].sort());
  expect(gets.map((r) => r.body.fileId).sort()).toEqual([image.id, child.id].sort());
});
