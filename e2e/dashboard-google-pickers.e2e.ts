/**
 * Ferry's own Dashboard (the demo page with a Google app: `?googleClientId=&googleApiKey=&
 * googleAppId=`) with Google's Drive Picker and Photos Picker, in real Chromium against the real
 * `ferry --google-picker` and the fakes: Google's scripts cannot load here, so
 * `support/google-scripts.ts` routes small fakes of them (Identity Services handing out the fake
 * Google's token, a Drive Picker dialog, the Photos Picker API forwarded to `ferry-fakes`). Drive:
 * the button asks Google for a `drive.file` token, opens the picker with the page's key and app
 * id, and the two picked files import through `POST /google-picker/get`; Photos: a picking
 * session whose page (the fake's) the person opens in a tab, polled until picked, then the photo
 * and the video import. Stored bytes compared by sha256. Without `--google-picker`, or without the
 * page's Google app, no picker shows.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { axeViolations } from './support/dashboard.ts';
import { startDemoFerry, uploadAndCompare } from './support/dashboard-providers.ts';
import { googlePickerArgs, type RunningFakes, startFakes } from './support/fakes.ts';
import type { RunningFerry } from './support/ferry.ts';
import { type PickerDoc, routeGoogle } from './support/google-scripts.ts';

/** The page's Google app, as the Uppy picker spec gives its plugins. */
const APP =
  '?googleClientId=picker-client.apps.googleusercontent.com&googleApiKey=picker-api-key&googleAppId=123456789012';

let fakes: RunningFakes;
let browser: Browser;
const running: RunningFerry[] = [];
const pages: Page[] = [];

beforeAll(async () => {
  fakes = await startFakes();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fakes?.stop();
});
afterEach(async () => {
  for (const p of pages.splice(0)) await p.close();
  for (const f of running.splice(0)) await f.stop();
});

/** The demo page at `query` on a fresh `ferry` with `args`, Google's scripts routed to fakes. */
async function open(args: string[], query: string, docs: PickerDoc[] = []) {
  const ferry = await startDemoFerry(fakes, args);
  running.push(ferry);
  const page = await browser.context.newPage();
  pages.push(page);
  await routeGoogle(page, fakes.fixture.google.pickerToken, docs, fakes.fixture.googlePhotos.apiUrl);
  await page.goto(`${ferry.url}/${query}`);
  return { page, ferry };
}

test('Drive Picker: a drive.file token, the picker with the page key and app id, two picked files imported byte-exact', async () => {
  const g = fakes.fixture.google;
  const picked = g.files.filter((f) => f.name === 'report.pdf' || f.name === 'beach.jpg');
  expect(picked).toHaveLength(2);
  const docs = [
    ...picked.map((f) => ({
      id: f.id,
      name: f.name,
      mimeType: f.name.endsWith('.pdf') ? 'application/pdf' : 'image/jpeg',
    })),
    { id: 'not-picked', name: 'other.txt', mimeType: 'text/plain' },
  ];
  const { page, ferry } = await open(googlePickerArgs(fakes.fixture), APP, docs);
  await page.getByRole('button', { name: 'Google Drive Picker', exact: true }).click();
  await page.getByRole('button', { name: 'Open Google Drive Picker' }).click();
  const dialog = page.getByRole('dialog', { name: 'Google Picker' });
  await dialog.waitFor({ timeout: 20_000 });
  expect(await page.evaluate(() => (window as unknown as { __gisScopes: string[] }).__gisScopes)).toEqual([
    'https://www.googleapis.com/auth/drive.file',
  ]);
  expect(await page.evaluate(() => (window as unknown as { __picker: Record<string, string> }).__picker)).toMatchObject(
    { developerKey: 'picker-api-key', appId: '123456789012', token: g.pickerToken },
  );
  for (const f of picked) await dialog.getByLabel(f.name).check();
  await dialog.getByRole('button', { name: 'Select' }).click();
  await uploadAndCompare(page, ferry, picked);
});

test('Photos Picker: a session opened in a tab, polled until picked, the photo and the video imported byte-exact', async () => {
  const items = fakes.fixture.googlePhotos.items;
  const { page, ferry } = await open(googlePickerArgs(fakes.fixture), APP);
  // The fake session reports a pick at its first poll; polls wait here until the person is done
  // in the tab, as Google's would, so the panel stays open meanwhile.
  let donePicking = () => {};
  const picking = new Promise<void>((resolve) => {
    donePicking = resolve;
  });
  await page.route('https://photospicker.googleapis.com/v1/sessions/*', async (route) => {
    if (route.request().method() === 'GET') await picking;
    await route.fallback();
  });
  await page.getByRole('button', { name: 'Google Photos Picker', exact: true }).click();
  await page.getByRole('button', { name: 'Open Google Photos Picker' }).click();
  const link = page.getByRole('link', { name: 'Open Google Photos Picker in a new tab' });
  await link.waitFor({ timeout: 20_000 });
  expect(await page.evaluate(() => (window as unknown as { __gisScopes: string[] }).__gisScopes)).toEqual([
    'https://www.googleapis.com/auth/photospicker.mediaitems.readonly',
  ]);
  expect(await axeViolations(page)).toEqual([]);
  // The person picks on Google's page (the fake's: it has picked at once) and closes it.
  const tab = page.waitForEvent('popup');
  await link.click();
  const picker = await tab;
  expect(await picker.title()).toBe('Google Photos');
  await picker.close();
  // Still waiting for the pick: the panel says so until Google's session reports it.
  const note = 'Pick in the Google Photos Picker tab; what you pick is added here when you are done.';
  expect(await page.getByRole('status').filter({ hasText: note }).count()).toBe(1);
  donePicking();
  await uploadAndCompare(page, ferry, items);
});

test('no picker without --google-picker on the server, nor without a Google app on the page', async () => {
  const noRoute = await open([], APP);
  await noRoute.page.getByRole('button', { name: 'Google Drive', exact: true }).waitFor();
  expect(await noRoute.page.getByRole('button', { name: /Picker/ }).count()).toBe(0);
  const noApp = await open(googlePickerArgs(fakes.fixture), '');
  await noApp.page.getByRole('button', { name: 'Google Drive', exact: true }).waitFor();
  expect(await noApp.page.getByRole('button', { name: /Picker/ }).count()).toBe(0);
});
