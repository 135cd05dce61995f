/**
 * Compatibility: Uppy's released `@uppy/google-drive` (with `@uppy/core`'s provider views and
 * companion client, and `@uppy/tus`, all from npm) in real Chromium against `ferry` and the fake
 * Google: its own sign-in (the popup to `/drive/connect`, the fake's consent page, the token
 * over the auth-callback socket `/api2/auth-callback/token/{uuid}`, which is the hand-off the
 * 6.x client speaks), its own listing (`/drive/list`, all pages), its own picking, and the import
 * through `POST /drive/get/{requestPath}` + the progress socket into `ferry`'s tus endpoint. The
 * stored bytes are compared by sha256 with what the fake serves (the export for a Google Doc).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from './support/browser.ts';
import { sha256Of } from './support/core-page.ts';
import type { RunningFakes } from './support/fakes.ts';
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
  stack = await startUppyStack('providers-uppy');
  ({ fakes, ferry, browser } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('@uppy/google-drive signs in, lists and imports a file and a Google Doc through ferry, bytes exact', async () => {
  const g = fakes.fixture.google;
  const page = await browser.context.newPage();
  const gets: { path: string; fileId: unknown }[] = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (req.method() === 'POST' && path.startsWith('/drive/get/')) {
      gets.push({ path, fileId: (JSON.parse(req.postData() ?? '{}') as { fileId?: unknown }).fileId });
    }
  });
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);

  // Uppy's auth view; its button opens the popup synchronously.
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: 'Sign in with Google' }).click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await popup.getByRole('button', { name: 'Allow' }).click();
  // Uppy closes the popup once the socket delivered the token.
  await closed;

  // Uppy's browser lists the root, loaded to the last page (`loadAllFiles`).
  const names = () => page.locator('.uppy-ProviderBrowserItem .uppy-truncate-text').allTextContents();
  await expect.poll(names, { timeout: 20_000 }).toEqual(expect.arrayContaining(['Holiday', 'Plan.docx', 'report.pdf']));
  // The account shows in Uppy's header.
  await expect.poll(() => page.getByText(g.email).count()).toBeGreaterThan(0);

  // Uppy's styled row covers its checkbox: a person clicks the file's label.
  for (const name of ['report.pdf', 'Plan.docx']) {
    await page.locator('label.uppy-ProviderBrowserItem-inner', { hasText: name }).click();
    await expect.poll(() => page.getByRole('checkbox', { name, exact: true }).isChecked()).toBe(true);
  }
  await page.getByRole('button', { name: 'Select 2' }).click();
  await expect.poll(() => page.evaluate(() => window.uppy.getFiles().length)).toBe(2);

  const out = await page.evaluate(async () => {
    const files = window.uppy.getFiles();
    const result = await window.uppy.upload();
    return {
      added: files.map((f: { name: string; isRemote: boolean; remote: { requestClientId?: string } }) => ({
        name: f.name,
        remote: f.isRemote,
      })),
      failed: (result.failed ?? []).map((f: { error?: unknown }) => String(f.error)),
      done: (result.successful ?? []).map(
        (f: { name: string; uploadURL: string; progress: { percentage: number } }) => ({
          name: f.name,
          url: f.uploadURL,
          percentage: f.progress.percentage,
        }),
      ),
    };
  });
  expect(out.failed).toEqual([]);
  expect(out.added.sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name))).toEqual([
    { name: 'Plan.docx', remote: true },
    { name: 'report.pdf', remote: true },
  ]);
  expect(out.done).toHaveLength(2);
  for (const done of out.done as { name: string; url: string; percentage: number }[]) {
    expect(done.url).toMatch(new RegExp(`^${ferry.url}/files/`));
    expect(done.percentage).toBe(100);
    const want = g.files.find((f) => f.name === done.name);
    const stored = new Uint8Array(await (await fetch(done.url)).arrayBuffer());
    expect({ name: done.name, size: stored.length, sha256: sha256Of(stored) }).toEqual({
      name: want?.name,
      size: want?.size,
      sha256: want?.sha256,
    });
  }
  // Uppy sends the provider's id as `fileId`, as ferry's own widget now does.
  const ids = ['Plan.docx', 'report.pdf'].map((n) => g.files.find((f) => f.name === n)?.id);
  expect(gets.map((r) => r.fileId).sort()).toEqual(ids.sort());
  await page.close();
}, 60_000);
