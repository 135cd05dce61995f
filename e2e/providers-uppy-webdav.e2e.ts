/**
 * Compatibility: Uppy's released `@uppy/webdav` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * WebDAV server (Nextcloud's layout): its own sign-in form (the collection URL with the user and
 * app password in it, posted to `POST /webdav/simple-auth`), its own listing (`/webdav/list/`, a
 * folder by its `requestPath`), its own picking, and the import through
 * `POST /webdav/get/{requestPath}` and the progress socket into `ferry`'s tus endpoint; stored
 * bytes compared by sha256.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import { type RunningFakes, webdavArgs } from './support/fakes.ts';
import type { RunningFerry } from './support/ferry.ts';
import { startUppyStack, type UppyStack } from './support/uppy-stack.ts';

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: Uppy's instance is driven from page scripts
    uppy: any;
  }
}

let stack: UppyStack | undefined;
let fakes: RunningFakes;
let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  stack = await startUppyStack('providers-uppy-webdav', webdavArgs);
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('@uppy/webdav signs in with a URL, lists the root and a folder, imports two files through ferry, bytes exact', async () => {
  const w = fakes.fixture.webdav;
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  // The plugin's one field: the collection URL with the app password in it, as a person pastes it.
  // Found by class: 2.0.0 renders its form with the view's i18n, which lacks the plugin's strings,
  // so the label and button read `pluginWebdavInputLabel` and `authenticate`.
  await page.locator('.uppy-SearchProvider-input').fill(w.urlWithPassword);
  await page.locator('.uppy-SearchProvider-searchButton').click();

  const names = () => page.locator('.uppy-ProviderBrowserItem .uppy-truncate-text').allTextContents();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Holiday', 'report.pdf']));
  // The password never reaches the page's storage, only the sealed token does.
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  expect(stored).not.toContain(w.password);
  expect(stored).not.toContain(w.urlWithPassword);

  // Into the folder through its requestPath; pick both files there (one name has a space).
  await page.locator('.uppy-ProviderBrowserItem', { hasText: 'Holiday' }).getByRole('button').first().click();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['beach day.jpg', 'notes.txt']));
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'beach day.jpg' }).click();
  await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: 'notes.txt' }).click();
  await page.getByRole('button', { name: 'Select 2' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(2);

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
  expect((out.done as { name: string }[]).map((d) => d.name).sort()).toEqual(['beach day.jpg', 'notes.txt']);
  for (const done of out.done as { name: string; url: string }[]) {
    expect(done.url).toMatch(new RegExp(`^${ferry.url}/files/`));
    const want = w.files.find((f) => f.name === done.name);
    const bytes = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, size: bytes.length, sha256: sha256Of(bytes) }).toEqual({
      name: want?.name,
      size: want?.size,
      sha256: want?.sha256,
    });
  }
  await page.close();
}, 60_000);
