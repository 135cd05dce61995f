/**
 * Compatibility: Uppy's released `@uppy/unsplash` (with `@uppy/core`'s search-provider view and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Unsplash: no sign-in, its own search (`/search/unsplash/list?q=`), its results with the
 * photographer, its own picking, and the import through `POST /search/unsplash/get/{id}` and the
 * progress socket into `ferry`'s tus endpoint; stored bytes compared by sha256.
 */
import { expect, test } from 'vitest';
import { unsplashArgs } from './support/fakes.ts';
import * as uppy from './support/uppy-stack.ts';

const stack = uppy.useUppyStack('providers-uppy-unsplash', unsplashArgs);

test('@uppy/unsplash searches, shows the photographers, imports two photos through ferry, bytes exact', async () => {
  const u = stack.fakes.fixture.unsplash;
  const searches: string[] = [];
  const page = await uppy.openUppyPage(stack, '/', (p) => {
    p.on('request', (req) => {
      const url = new URL(req.url());
      if (url.pathname.startsWith('/search/unsplash/')) searches.push(`${req.method()} ${url.pathname}${url.search}`);
    });
  });

  await page.getByRole('searchbox', { name: 'Enter text to search for images' }).fill('misty forest');
  await page.locator('.uppy-SearchProvider-searchButton').click();
  const picked = page.locator('label.uppy-ProviderBrowserItem-inner');
  await expect.poll(() => picked.count(), { timeout: 20_000 }).toBe(u.photos.length);
  // Uppy's item view links the photographer, from the `author` of each result.
  // (Uppy shows it on hover: read it from the page, not the accessibility tree.)
  await expect
    .poll(() => page.locator('a.uppy-ProviderBrowserItem-author').allTextContents())
    .toEqual(u.photos.map(() => 'Ada Lovelace'));

  for (const photo of u.photos)
    await page.locator(`label.uppy-ProviderBrowserItem-inner[aria-label="${photo.name}"]`).click();
  await page.getByRole('button', { name: `Select ${u.photos.length}` }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(u.photos.length);

  await uppy.uploadAndCompare(page, stack, u.photos);
  expect(searches).toEqual([
    'GET /search/unsplash/list?q=misty%20forest',
    ...u.photos.map((p) => `POST /search/unsplash/get/${p.id}`).sort(),
  ]);
  await page.close();
}, 60_000);
