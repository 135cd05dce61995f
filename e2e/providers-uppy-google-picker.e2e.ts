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
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { googlePickerArgs } from './support/fakes.ts';
import { routeGoogle } from './support/google-scripts.ts';
import * as uppy from './support/uppy-stack.ts';

declare global {
  interface Window {
    __gisScopes: string[];
  }
}

const stack = uppy.useUppyStack('providers-uppy-google-picker', googlePickerArgs);

test('@uppy/google-drive-picker signs in with drive.file, picks two files in the picker, ferry imports them, bytes exact', async () => {
  const g = stack.fakes.fixture.google;
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
  const page = await uppy.openUppyPage(stack, '/?picker=drive', (p) =>
    routeGoogle(p, g.pickerToken, docs, stack.fakes.fixture.googlePhotos.apiUrl),
  );

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

  await uppy.uploadAndCompare(page, stack, picked);
  await page.close();
}, 60_000);

test('@uppy/google-photos-picker creates a session, polls it, imports the picked photo and video through ferry, bytes exact', async () => {
  const g = stack.fakes.fixture.google;
  const { apiUrl, items } = stack.fakes.fixture.googlePhotos;
  // The plugin opens the session's pickerUri in a window, where the person would pick.
  let popup: Promise<Page> | undefined;
  const page = await uppy.openUppyPage(stack, '/?picker=photos', async (p) => {
    await routeGoogle(p, g.pickerToken, [], apiUrl);
    popup = p.waitForEvent('popup');
  });
  await (await popup)?.close();
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

  await uppy.uploadAndCompare(page, stack, items);
  await page.close();
}, 60_000);
