/**
 * Compatibility: Uppy's released `@uppy/dropbox` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Dropbox: its own sign-in (the popup to `/dropbox/connect`, the fake's authorize redirect, the
 * token over the auth-callback socket), its own listing (`/dropbox/list/`, a folder by its
 * `requestPath`), its own picking, and the import through `POST /dropbox/get/{requestPath}` and
 * the progress socket into `ferry`'s tus endpoint; stored bytes compared by sha256.
 */
import { expect, test } from 'vitest';
import { dropboxArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-dropbox', dropboxArgs);

test('@uppy/dropbox signs in, lists the root and a folder, imports a file from it through ferry, bytes exact', async () => {
  const d = stack.fakes.fixture.dropbox;
  const page = await uppy.openUppyPage(stack);
  // The fake authorizes at once.
  await uppy.signInThroughPopup(page, 'Connect to Dropbox');

  const names = uppy.listedNames(page);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Holiday', 'report.pdf']));
  await expect.poll(() => page.getByText(d.email).count()).toBeGreaterThan(0);

  // Into the folder through its requestPath, then pick a file there.
  await uppy.openFolder(page, 'Holiday');
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['beach.jpg', 'notes.txt']));
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'beach.jpg' }).click();
  await page.getByRole('button', { name: 'Select 1' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(1);

  await uppy.uploadAndCompare(page, stack, d.files, 1);
  await page.close();
}, 60_000);
