/**
 * `TusOptions.uploadWorker` in Chromium (the demo page's `?uploadWorker=1`): small files' tus
 * requests go from a dedicated Worker, so the page's own resource timing lists none of them,
 * while a file over 64 KiB is still sent by the page; every file is stored byte-exact. Pausing a
 * batch mid-way and resuming it still stores every file, as with the page's own requests.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { type RunningFerry, repoRoot, sha256, startFerry, storedTusUploads } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;

beforeAll(async () => {
  // The demo page as `npm run build` leaves it (the binary embeds the same page when built after it).
  ferry = await startFerry(['--ui-dir', join(repoRoot, 'apps', 'demo', 'dist')]);
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-fixtures-'));
});

beforeEach(() => clearSiteData(browser.context, ferry.url));

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await rm(fixtures, { recursive: true, force: true });
});

/** `count` files of `size` random bytes named `<prefix>-N.bin`: their paths and sha256 by name. */
async function files(prefix: string, count: number, size: number) {
  const digests = new Map<string, string>();
  const paths: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const name = `${prefix}-${i}.bin`;
    const bytes = randomBytes(size);
    await writeFile(join(fixtures, name), bytes);
    digests.set(name, sha256(bytes));
    paths.push(join(fixtures, name));
  }
  return { paths, digests };
}

/** The page's requests to the tus endpoint, from its resource timing (a Worker's are not listed). */
const pageTusRequests = (page: Page) =>
  page.evaluate(
    () => performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.startsWith('/files')).length,
  );

/** Every picked file has a stored upload with its exact bytes. */
async function expectStored(digests: Map<string, string>) {
  const stored = await storedTusUploads(ferry.dataDir);
  for (const [name, digest] of digests) {
    expect(
      stored.some((s) => s.filename === name && s.sha256 === digest),
      name,
    ).toBe(true);
  }
}

test('small files go from the Worker, a larger one from the page; every file stored byte-exact', async () => {
  const small = await files('worker-small', 12, 10 * 1024);
  const large = await files('worker-large', 1, 100 * 1024);
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/?uploadWorker=1`);
  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles([...small.paths, ...large.paths]);
  await page.getByRole('button', { name: /^Upload 13 files$/ }).click();
  await expect.poll(() => page.getByTestId('ferry-status').textContent(), { timeout: 60_000 }).toBe('Complete');
  await expectStored(new Map([...small.digests, ...large.digests]));
  // Only the 100 KiB file's request (its creation, carrying the whole file) went from the page.
  expect(await pageTusRequests(page)).toBe(1);
  await page.close();
});

test('a batch paused mid-way through the Worker and resumed stores every file', async () => {
  const batch = await files('worker-paused', 40, 10 * 1024);
  const page = await browser.context.newPage();
  // One upload at a time, so the batch is still running when it is paused.
  await page.goto(`${ferry.url}/?uploadWorker=1&limit=1`);
  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(batch.paths);
  await page.getByRole('button', { name: /^Upload 40 files$/ }).click();
  await page.waitForFunction(
    () => (window.ferry?.getFiles().filter((f) => f.state === 'complete').length ?? 0) >= 3,
    undefined,
    { timeout: 60_000 },
  );
  const paused = await page.evaluate(() => {
    window.ferry?.pauseAll();
    return window.ferry?.getFiles().filter((f) => f.state === 'paused').length ?? 0;
  });
  expect(paused).toBeGreaterThan(0);
  await page.evaluate(() => window.ferry?.resumeAll());
  await expect.poll(() => page.getByTestId('ferry-status').textContent(), { timeout: 60_000 }).toBe('Complete');
  await expectStored(batch.digests);
  expect(await pageTusRequests(page)).toBe(0);
  await page.close();
});
