/**
 * The camera panel with Chromium's fake camera and microphone: a snapshot after a countdown and
 * 'Smile!', and a short recording; both upload and the server stores exactly the captured bytes.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { axeViolations, engineFile, screenshot, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser({ fakeMedia: true });
});
// The demo keeps files across page loads (recovery): each test starts from a clean origin.
beforeEach(() => clearSiteData(browser.context, ferry.url));
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
});

/** Opens the camera panel; `mode` picks what a recording holds (pictures need no mode). */
async function openCamera(page: Page, mode?: string) {
  await page.getByRole('button', { name: 'Camera' }).click();
  if (mode) await page.getByRole('combobox', { name: 'Camera mode' }).selectOption(mode);
  await expect.poll(() => page.locator('.ferry-camera').getAttribute('data-status'), { timeout: 15_000 }).toBe('ready');
}

test('a picture after the countdown and Smile! uploads as cam-{timestamp}.jpg', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/?countdown=1`);
  await openCamera(page);
  expect(await page.locator('.ferry-camera video').getAttribute('data-mirrored')).toBe('true');
  await screenshot(page, 'camera');
  expect(await axeViolations(page)).toEqual([]);

  const before = Date.now();
  await page.getByRole('button', { name: 'Take a picture' }).click();
  await expect.poll(() => page.locator('.ferry-camera-overlay').textContent()).toBe('1…');
  await expect.poll(() => page.locator('.ferry-camera-overlay').textContent(), { timeout: 3000 }).toBe('Smile!');
  await expect.poll(() => page.getByTestId('ferry-toast').first().textContent()).toContain('Smile!');
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 5000 }).toBe(1);

  const name = (await page.locator('.ferry-file-name').textContent()) ?? '';
  expect(name).toMatch(/^cam-\d+\.jpg$/);
  const stamp = Number(name.slice(4, -4));
  // Countdown (1 s) then 'Smile!' for 1500 ms before the snapshot.
  expect(stamp - before).toBeGreaterThanOrEqual(2400);
  const captured = await engineFile(page, name);
  expect(captured.type).toBe('image/jpeg');
  expect(captured.head.slice(0, 3)).toEqual([0xff, 0xd8, 0xff]);

  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  const stored = (await storedWithMeta(ferry.dataDir)).find((s) => s.filename === name);
  expect(stored?.sha256).toBe(captured.sha);
  await page.close();
});

test('a short recording uploads as webcam-{timestamp}.webm', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await openCamera(page, 'video-audio');
  await page.getByRole('button', { name: 'Begin video recording' }).click();
  await expect.poll(() => page.locator('.ferry-camera').getAttribute('data-recording')).toBe('true');
  // A recording needs real time to pass; a second of fake video is enough.
  await page.waitForTimeout(1200);
  await page.getByRole('button', { name: 'Stop video recording' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 10_000 }).toBe(1);

  const name = (await page.locator('.ferry-file-name').textContent()) ?? '';
  expect(name).toMatch(/^webcam-\d+\.webm$/);
  const captured = await engineFile(page, name);
  expect(captured.type).toBe('video/webm');
  // EBML magic of a WebM/Matroska file.
  expect(captured.head).toEqual([0x1a, 0x45, 0xdf, 0xa3]);

  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  const stored = (await storedWithMeta(ferry.dataDir)).find((s) => s.filename === name);
  expect(stored?.sha256).toBe(captured.sha);
  await page.close();
});

test('an audio-only recording is webm audio; a recording stops by itself before maxFileSize', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/?maxFileSize=40000`);
  await openCamera(page, 'audio-only');
  await page.getByRole('button', { name: 'Begin video recording' }).click();
  await page.waitForTimeout(800);
  await page.getByRole('button', { name: 'Stop video recording' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 10_000 }).toBe(1);
  const audio = (await page.locator('.ferry-file-name').textContent()) ?? '';
  expect(audio).toMatch(/^webcam-\d+\.webm$/);
  expect((await engineFile(page, audio)).type).toBe('audio/webm');

  // Video at the fake camera's bitrate passes 40,000 bytes within seconds; nobody presses stop.
  await openCamera(page, 'video-only');
  await page.getByRole('button', { name: 'Begin video recording' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 30_000 }).toBe(2);
  const sizes = await page.evaluate(() => window.ferry?.getFiles().map((f) => [f.type, f.size]));
  const video = sizes?.find(([type]) => type === 'video/webm');
  expect(video?.[1]).toBeGreaterThan(0);
  expect(video?.[1]).toBeLessThanOrEqual(40_000);
  await page.close();
});

test('the panel shows both buttons; a picture and a recording are each added', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await openCamera(page);
  const picture = page.getByRole('button', { name: 'Take a picture' });
  const record = page.getByRole('button', { name: 'Begin video recording' });
  expect([await picture.isVisible(), await record.isVisible()]).toEqual([true, true]);
  await picture.click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 5000 }).toBe(1);

  await openCamera(page);
  await page.getByRole('button', { name: 'Begin video recording' }).click();
  await page.waitForTimeout(1000);
  await page.getByRole('button', { name: 'Stop video recording' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count(), { timeout: 10_000 }).toBe(2);
  const types = await page.evaluate(() => window.ferry?.getFiles().map((f) => [f.source, f.type]));
  expect(types).toEqual([
    ['camera', 'image/jpeg'],
    ['camera', 'video/webm'],
  ]);

  // Audio only has no picture to take; video only keeps both.
  await openCamera(page, 'audio-only');
  expect(await page.getByRole('button', { name: 'Take a picture' }).count()).toBe(0);
  await page.getByRole('combobox', { name: 'Camera mode' }).selectOption('video-only');
  await expect.poll(() => page.getByRole('button', { name: 'Take a picture' }).count()).toBe(1);
  await page.close();
});
