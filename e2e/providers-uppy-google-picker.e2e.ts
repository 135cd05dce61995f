/**
 * Compatibility: Uppy's released `@uppy/google-drive-picker` and `@uppy/google-photos-picker`
 * (with `@uppy/core`'s picker code and `@uppy/tus`, all from npm) in real Chromium against
 * `ferry`: the plugin's own sign-in through Google Identity Services (asking `drive.file` /
 * the Photos Picker scope), its own picker flow (Drive: Google's picker dialog, whose picked
 * documents the fake Google serves; Photos: a picking session, its polling and `mediaItems` on
 * the fake Photos Picker API), and the import through `POST /google-picker/get` and the progress
 * socket into `ferry`'s tus endpoint; stored bytes compared by sha256. Google's scripts cannot
 * load here, so `support/google-scripts.ts` routes small fakes of them into the page.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import { type FixtureFile, googlePickerArgs, type RunningFakes } from './support/fakes.ts';
import type { RunningFerry } from './support/ferry.ts';
import { routeGoogle } from './support/google-scripts.ts';
import { startUppyStack, type UppyStack } from './support/uppy-stack.ts';

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: Uppy's instance is driven from page scripts
    uppy: any;
    __gisScopes: string[];
  }
}

let stack: UppyStack | undefined;
let fakes: RunningFakes;
let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  stack = await startUppyStack('providers-uppy-google-picker', googlePickerArgs);
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Uploads every file; each stored file's name, size and sha256 beside the fixture's. */
async function uploadAndCompare(page: import('playwright-core').Page, want: FixtureFile[]) {
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
  expect(out.done).toHaveLength(want.length);
  for (const done of out.done as { name: string; url: string }[]) {
    expect(done.url).toMatch(new RegExp(`^${ferry.url}/files/`));
    const file = want.find((f) => f.name === done.name);
    const stored = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, size: stored.length, sha256: sha256Of(stored) }).toEqual({
      name: file?.name,
      size: file?.size,
      sha256: file?.sha256,
    });
  }
}

test('@uppy/google-drive-picker signs in with drive.file, picks two files in the picker, ferry imports them, bytes exact', async () => {
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
  const page = await browser.context.newPage();
  await routeGoogle(page, g.pickerToken, docs, fakes.fixture.googlePhotos.apiUrl);
  await page.goto(`${ferry.url}/?picker=drive`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  // The plugin signs in as it mounts and opens Google's picker; the person ticks two files.
  const dialog = page.getByRole('dialog', { name: 'Google Picker' });
  await dialog.waitFor({ timeout: 20_000 });
  expect(await page.evaluate(() => window.__gisScopes)).toEqual(['https://www.googleapis.com/auth/drive.file']);
  expect(await page.evaluate(() => (window as unknown as { __picker: Record<string, string> }).__picker)).toMatchObject(
    {
      developerKey: 'picker-api-key',
      appId: '123456789012',
      token: g.pickerToken,
    },
  );
  for (const f of picked) await dialog.getByLabel(f.name).check();
  await dialog.getByRole('button', { name: 'Select' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(2);

  await uploadAndCompare(page, picked);
  await page.close();
}, 60_000);

test('@uppy/google-photos-picker creates a session, polls it, imports the picked photo and video through ferry, bytes exact', async () => {
  const g = fakes.fixture.google;
  const items = fakes.fixture.googlePhotos.items;
  const page = await browser.context.newPage();
  await routeGoogle(page, g.pickerToken, [], fakes.fixture.googlePhotos.apiUrl);
  // The plugin opens the session's pickerUri in a window, where the person would pick.
  const popup = page.waitForEvent('popup');
  await page.goto(`${ferry.url}/?picker=photos`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  await (await popup).close();
  expect(await page.evaluate(() => window.__gisScopes)).toEqual([
    'https://www.googleapis.com/auth/photospicker.mediaitems.readonly',
  ]);
  // The fake person picked at once: the plugin's next poll sees mediaItemsSet and adds both.
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length), { timeout: 20_000 }).toBe(2);
  const meta = await page.evaluate(() =>
    window.uppy
      .getFiles()
      .map((f: { name: string; meta: { googlePhotosFileType?: string } }) => [f.name, f.meta.googlePhotosFileType]),
  );
  expect(meta).toEqual(
    expect.arrayContaining([
      ['IMG_0001.jpg', 'PHOTO'],
      ['VID_0001.mp4', 'VIDEO'],
    ]),
  );

  await uploadAndCompare(page, items);
  await page.close();
}, 60_000);
