/**
 * Compatibility: Uppy's released `@uppy/onedrive` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Microsoft: its own sign-in (the popup to `/onedrive/connect`, PKCE, the token over the
 * auth-callback socket), its own listing (the top level with "SharePoint sites", a site, its
 * document library), its own picking, and the import through `POST /onedrive/get/{requestPath}`
 * (Graph's content redirect) and the progress socket into `ferry`'s tus endpoint; stored bytes
 * compared by sha256.
 */
import { expect, test } from 'vitest';
import { onedriveArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-onedrive', onedriveArgs);

test('@uppy/onedrive signs in, opens a SharePoint library and imports a file from it through ferry, bytes exact', async () => {
  const o = stack.fakes.fixture.onedrive;
  const page = await uppy.openUppyPage(stack);
  // The fake authorizes at once.
  await uppy.signInThroughPopup(page, /OneDrive/);

  const names = uppy.listedNames(page);
  await expect
    .poll(names, { timeout: 20_000 })
    .toEqual(expect.arrayContaining(['Shared with me', 'SharePoint sites', 'Trips']));
  await expect.poll(() => page.getByText(o.mail).count()).toBeGreaterThan(0);

  for (const folder of ['SharePoint sites', 'Marketing', 'Documents']) {
    await uppy.openFolder(page, folder);
    if (folder !== 'Documents') {
      await expect.poll(names, { timeout: 20_000 }).not.toContain(folder);
    }
  }
  await expect.poll(names, { timeout: 20_000 }).toEqual(['brand.pdf']);
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'brand.pdf' }).click();
  await page.getByRole('button', { name: 'Select 1' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(1);

  await uppy.uploadAndCompare(page, stack, o.files, 1);
  await page.close();
}, 60_000);
