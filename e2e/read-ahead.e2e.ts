/**
 * Reading small files ahead, in Chromium: a picked small file's bytes are read while the page is
 * idle and the upload sends those bytes. Shown by changing the file on disk after it was read:
 * Chromium refuses to send a picked file that changed since it was picked, so the upload of the
 * bytes read ahead succeeds with the content as picked, and without reading ahead it fails.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { type RunningFerry, sha256, startFerry, storedTusUploads } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-fixtures-'));
});

beforeEach(() => clearSiteData(browser.context, ferry.url));

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await rm(fixtures, { recursive: true, force: true });
});

/** Picks a fresh 10 KiB file on `query`'s demo page, then rewrites it on disk; the page and the bytes picked. */
async function pickThenChange(name: string, query: string) {
  const path = join(fixtures, name);
  const picked = randomBytes(10 * 1024);
  await writeFile(path, picked);
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/${query}`);
  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles([path]);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  // Reading ahead takes a few milliseconds once the page is idle; a person takes longer to click.
  await page.waitForTimeout(1000);
  await writeFile(path, randomBytes(picked.length));
  const later = new Date(Date.now() + 5000);
  await utimes(path, later, later);
  return { page, picked };
}

test('a small file read ahead uploads as it was picked, though it changed on disk since', async () => {
  const { page, picked } = await pickThenChange('read-ahead.bin', '');
  await page.getByRole('button', { name: /^Upload 1 file$/ }).click();
  await expect.poll(() => page.getByTestId('ferry-status').textContent(), { timeout: 60_000 }).toBe('Complete');
  const stored = (await storedTusUploads(ferry.dataDir)).find((s) => s.filename === 'read-ahead.bin');
  expect(stored?.sha256).toBe(sha256(picked));
  await page.close();
});

test('without reading ahead, the same change makes the upload fail and nothing is stored', async () => {
  const { page } = await pickThenChange('sent-as-file.bin', '?readAhead=off');
  await page.getByRole('button', { name: /^Upload 1 file$/ }).click();
  // The engine retries (0, 1, 3 and 5 s) before the file shows its error.
  await expect
    .poll(() => page.getByTestId('ferry-file').first().getAttribute('data-state'), { timeout: 60_000 })
    .toBe('error');
  const stored = (await storedTusUploads(ferry.dataDir)).filter((s) => s.filename === 'sent-as-file.bin');
  expect(stored.every((s) => s.size < 10 * 1024)).toBe(true);
  await page.close();
});
