/**
 * Compatibility: Uppy's released `@uppy/facebook` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Facebook: its own sign-in (the popup to `/facebook/connect`, the fake's login dialog, the token
 * over the auth-callback socket), its own listing (the albums, then an album's photos in Uppy's
 * grid by their `requestPath`), its own picking, and the import through
 * `POST /facebook/get/{requestPath}` (the photo's largest rendition) and the progress socket into
 * `ferry`'s tus endpoint; stored bytes compared by sha256.
 */
import { expect, test } from 'vitest';
import { facebookArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-facebook', facebookArgs);

test('@uppy/facebook signs in, lists albums and an album, imports a photo through ferry, bytes exact', async () => {
  const f = stack.fakes.fixture.facebook;
  const page = await uppy.openUppyPage(stack);
  await uppy.signInThroughPopup(page, /Facebook/, 'Continue as Fake Facebook User');

  const names = uppy.listedNames(page);
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Summer trip', 'Profile pictures']));
  await expect.poll(() => page.getByText(f.email).count()).toBeGreaterThan(0);

  // Into the album (Uppy shows photos as a grid, named by aria-label), then pick two photos.
  await uppy.openFolder(page, 'Summer trip');
  const photo = (name: string) => page.locator(`label.uppy-ProviderBrowserItem-inner[aria-label="${name}"]`);
  await expect.poll(() => photo('Beach').count(), { timeout: 20_000 }).toBe(1);
  await photo('Beach').click();
  await photo('Sunset').click();
  await page.getByRole('button', { name: 'Select 2' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(2);

  await uppy.uploadAndCompare(page, stack, f.files, 2);
  await page.close();
}, 60_000);
