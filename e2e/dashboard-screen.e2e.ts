/**
 * Screen capture in Chromium (`getDisplayMedia`; with the fake-media flags Chromium shares a fake
 * 1280×720 screen without asking): a screenshot is a PNG of the shared screen's size, a recording
 * is a WebM video; both upload and the server stores exactly the captured bytes.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { axeViolations, engineFile, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser({ fakeMedia: true });
});
beforeEach(() => clearSiteData(browser.context, ferry.url));
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
});

async function openScreen(page: Page) {
  await page.goto(`${ferry.url}/`);
  await page.getByRole('button', { name: 'Screen' }).click();
  await expect.poll(() => page.getByRole('button', { name: 'Take a screenshot' }).count()).toBe(1);
}

test('a screenshot of the shared screen is a PNG of its size and uploads byte-exact', async () => {
  const page = await browser.context.newPage();
  await openScreen(page);
  expect(await axeViolations(page)).toEqual([]);
  await page.getByRole('button', { name: 'Take a screenshot' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 15_000 }).toBe(1);
  const name = (await page.locator('.ferry-file-name').textContent()) ?? '';
  expect(name).toMatch(/^screenshot-\d+\.png$/);
  const shot = await engineFile(page, name);
  expect(shot.type).toBe('image/png');
  expect(shot.head).toEqual([0x89, 0x50, 0x4e, 0x47]);
  expect(shot.dims).toEqual([1280, 720]);

  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  const stored = (await storedWithMeta(ferry.dataDir)).find((s) => s.filename === name);
  expect(stored?.sha256).toBe(shot.sha);
  await page.close();
});

test('a screen recording started and stopped from the panel is a WebM video and uploads byte-exact', async () => {
  const page = await browser.context.newPage();
  await openScreen(page);
  await page.getByRole('button', { name: 'Start screen recording' }).click();
  await expect.poll(() => page.getByRole('button', { name: 'Stop screen recording' }).count()).toBe(1);
  await page.waitForTimeout(1500);
  await page.getByRole('button', { name: 'Stop screen recording' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 15_000 }).toBe(1);
  const name = (await page.locator('.ferry-file-name').textContent()) ?? '';
  expect(name).toMatch(/^screen-\d+\.webm$/);
  const video = await engineFile(page, name);
  expect(video.type).toMatch(/^video\/webm/);
  // EBML magic: a WebM file.
  expect(video.head).toEqual([0x1a, 0x45, 0xdf, 0xa3]);
  expect(video.length).toBeGreaterThan(1000);

  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  const stored = (await storedWithMeta(ferry.dataDir)).find((s) => s.filename === name);
  expect(stored?.sha256).toBe(video.sha);
  await page.close();
});
