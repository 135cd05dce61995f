/**
 * Compatibility: Uppy's released `@uppy/webdav` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * WebDAV server (Nextcloud's layout): its own sign-in form (the collection URL with the user and
 * app password in it, posted to `POST /webdav/simple-auth`), its own listing (`/webdav/list/`, a
 * folder by its `requestPath`), its own picking, and the import through
 * `POST /webdav/get/{requestPath}` and the progress socket into `ferry`'s tus endpoint; stored
 * bytes compared by sha256.
 */
import { expect, test } from 'vitest';
import { webdavArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-webdav', webdavArgs);

test('@uppy/webdav signs in with a URL, lists the root and a folder, imports two files through ferry, bytes exact', async () => {
  const w = stack.fakes.fixture.webdav;
  const page = await uppy.openUppyPage(stack);

  // The plugin's one field: the collection URL with the app password in it, as a person pastes it.
  // Found by class: 2.0.0 renders its form with the view's i18n, which lacks the plugin's strings,
  // so the label and button read `pluginWebdavInputLabel` and `authenticate`.
  await page.locator('.uppy-SearchProvider-input').fill(w.urlWithPassword);
  await page.locator('.uppy-SearchProvider-searchButton').click();

  const names = uppy.listedNames(page);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Holiday', 'report.pdf']));
  // The password never reaches the page's storage, only the sealed token does.
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  expect(stored).not.toContain(w.password);
  expect(stored).not.toContain(w.urlWithPassword);

  // Into the folder through its requestPath; pick both files there (one name has a space).
  await uppy.openFolder(page, 'Holiday');
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['beach day.jpg', 'notes.txt']));
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'beach day.jpg' }).click();
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'notes.txt' }).click();
  await page.getByRole('button', { name: 'Select 2' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(2);

  const done = await uppy.uploadAndCompare(page, stack, w.files, 2);
  expect(done.map((d) => d.name).sort()).toEqual(['beach day.jpg', 'notes.txt']);
  await page.close();
}, 60_000);
