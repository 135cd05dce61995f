/**
 * Compatibility: Uppy's released `@uppy/box` (with `@uppy/core`'s provider views and companion
 * client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake Box: its
 * own sign-in (the popup to `/box/connect`, the fake's consent page, the token over the
 * auth-callback socket), its own listing (`/box/list/`, a folder by its `requestPath`), its own
 * picking, and the import through `POST /box/get/{requestPath}` (Box's content redirect) and the
 * progress socket into `ferry`'s tus endpoint; stored bytes compared by sha256.
 */
import { expect, test } from 'vitest';
import { boxArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-box', boxArgs);

test('@uppy/box signs in, lists the root and a folder, imports a file from the folder through ferry, bytes exact', async () => {
  const b = stack.fakes.fixture.box;
  const page = await uppy.openUppyPage(stack);
  await uppy.signInThroughPopup(page, /Box/, 'Grant access to Box');

  const names = uppy.listedNames(page);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Projects', 'deck.pdf']));
  await expect.poll(() => page.getByText(b.login).count()).toBeGreaterThan(0);

  // Into the folder through its requestPath, then pick a file there.
  await uppy.openFolder(page, 'Projects');
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['sketch.png', 'minutes.txt']));
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'sketch.png' }).click();
  await page.getByRole('button', { name: 'Select 1' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(1);

  await uppy.uploadAndCompare(page, stack, b.files, 1);
  await page.close();
}, 60_000);
