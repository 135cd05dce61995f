/**
 * The Dashboard's look and accessibility through its states: axe-core finds no serious or
 * critical violation (empty, with files, uploading, complete, error, dark), screenshots of each
 * go to e2e/screenshots/, thumbnails come out 280 px wide with EXIF orientation applied, and
 * 10,000 files keep only the visible rows in the DOM.
 */
import { randomBytes } from 'node:crypto';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { axeViolations, screenshot, statusText } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser();
});
// The demo keeps files across page loads (recovery): each test starts from a clean origin.
beforeEach(() => clearSiteData(browser.context, ferry.url));
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
});

/** A JPEG `w`x`h` drawn in the page, with an EXIF APP1 segment saying `orientation`. */
async function addExifJpeg(page: Page, name: string, w: number, h: number, orientation: number): Promise<string> {
  return page.evaluate(
    async ({ name, w, h, orientation }) => {
      const canvas = new OffscreenCanvas(w, h);
      const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
      ctx.fillStyle = '#3a7bd5';
      ctx.fillRect(0, 0, w, h);
      ctx.fillStyle = '#f5c542';
      ctx.fillRect(0, 0, w / 4, h);
      const jpeg = new Uint8Array(await (await canvas.convertToBlob({ type: 'image/jpeg' })).arrayBuffer());
      // APP1 "Exif" with a big-endian TIFF holding one IFD entry: Orientation (0x0112), SHORT.
      const tiff = [
        0x4d,
        0x4d,
        0,
        42,
        0,
        0,
        0,
        8,
        0,
        1,
        0x01,
        0x12,
        0,
        3,
        0,
        0,
        0,
        1,
        0,
        orientation,
        0,
        0,
        0,
        0,
        0,
        0,
      ];
      const body = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff];
      const app1 = [0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
      const bytes = new Uint8Array([...jpeg.subarray(0, 2), ...app1, ...jpeg.subarray(2)]);
      const id = window.ferry?.addFile({ data: new File([bytes], name, { type: 'image/jpeg' }), source: 'local' });
      return id ?? '';
    },
    { name, w, h, orientation },
  );
}

async function previewSize(page: Page, id: string): Promise<{ w: number; h: number; url: string } | null> {
  return page.evaluate(async (id) => {
    const url = window.ferry?.getFile(id)?.preview;
    if (!url) return null;
    const img = new Image();
    img.src = url;
    await img.decode();
    return { w: img.naturalWidth, h: img.naturalHeight, url };
  }, id);
}

test('states look right, pass axe-core, and thumbnails respect EXIF orientation', async () => {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 900, height: 720 });
  await page.goto(`${ferry.url}/`);
  await expect.poll(() => page.locator('.ferry-dashboard').count()).toBe(1);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'empty');

  // A 400x200 JPEG marked "rotate 90° clockwise" (orientation 6) is shown 200x400: the thumbnail
  // is 200 wide (never upscaled) and 400 high; a plain 1200x600 one is scaled to 280x140.
  const rotated = await addExifJpeg(page, 'rotated.jpg', 400, 200, 6);
  const wide = await addExifJpeg(page, 'wide.jpg', 1200, 600, 1);
  await page.evaluate(
    (b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      window.ferry?.addFile({
        data: new File([bytes], 'big-archive.zip', { type: 'application/zip' }),
        source: 'local',
      });
    },
    randomBytes(6 * 1024 * 1024).toString('base64'),
  );
  await expect.poll(() => previewSize(page, rotated).then((s) => s && [s.w, s.h])).toEqual([200, 400]);
  await expect.poll(() => previewSize(page, wide).then((s) => s && [s.w, s.h])).toEqual([280, 140]);
  const wideUrl = (await previewSize(page, wide))?.url ?? '';
  expect(await axeViolations(page)).toEqual([]);

  // Uploading, slowed down so the state can be seen.
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 20,
    downloadThroughput: -1,
    uploadThroughput: 1024 * 1024,
  });
  await page.getByRole('button', { name: 'Upload 3 files' }).click();
  await expect.poll(() => statusText(page), { timeout: 20_000 }).toMatch(/^Uploading: ([1-9]\d?)%$/);
  await expect
    .poll(() => page.locator('.ferry-status-details').textContent(), { timeout: 10_000 })
    .toMatch(/\/s · .* left$/);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'uploading');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'complete');

  // Removing a file revokes its thumbnail's object URL.
  await page.getByRole('button', { name: 'Done' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(0);
  const revoked = await page.evaluate(
    async (url) =>
      fetch(url).then(
        () => false,
        () => true,
      ),
    wideUrl,
  );
  expect(revoked).toBe(true);
  await page.close();
});

test('the error state offers retry and details, and the dark theme passes axe-core', async () => {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 900, height: 720 });
  await page.route('**/files/**', (route) => route.fulfill({ status: 403, body: 'no uploads for you' }));
  await page.goto(`${ferry.url}/?theme=dark`);
  await page.evaluate(() => {
    window.ferry?.addFile({ data: new File(['hello'], 'refused.txt', { type: 'text/plain' }), source: 'local' });
  });
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 20_000 }).toBe('1 file failed to upload');
  await expect.poll(() => page.getByTestId('ferry-file').getAttribute('data-state')).toBe('error');
  expect(await page.getByRole('button', { name: 'Retry all' }).count()).toBe(1);
  expect(await page.getByRole('button', { name: 'Retry upload refused.txt' }).count()).toBe(1);
  await expect.poll(() => page.getByTestId('ferry-toast').count()).toBeGreaterThan(0);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'error');

  // The file card shows the error's detail.
  await page.getByRole('button', { name: 'Details refused.txt' }).click();
  await expect.poll(() => page.locator('.ferry-card-error').count()).toBe(1);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'file-card');
  await page.getByRole('button', { name: 'Back' }).click();

  await page.unroute('**/files/**');
  await page.evaluate(() => {
    window.ferry?.addFile({
      data: new File(['x'.repeat(3000)], 'notes.md', { type: 'text/markdown' }),
      source: 'local',
    });
  });
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'dark');

  // Down to a phone screen: nothing spills out sideways.
  await page.setViewportSize({ width: 375, height: 700 });
  const overflow = await page.locator('.ferry-dashboard').evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await screenshot(page, 'phone');
  await page.close();
});

test('10,000 files: only the visible rows are in the DOM and the last one scrolls into view', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  const ms = await page.evaluate(async () => {
    const files = Array.from({ length: 10_000 }, (_, i) => ({
      data: new File([`#${i}`], `file-${i}.txt`, { type: 'text/plain' }),
      source: 'local',
    }));
    const start = performance.now();
    window.ferry?.addFiles(files);
    await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    return performance.now() - start;
  });
  await expect.poll(() => page.getByTestId('ferry-status').textContent()).toBe('10000 files selected');
  const rows = await page.getByTestId('ferry-file').count();
  expect(rows).toBeGreaterThan(3);
  expect(rows).toBeLessThan(30);
  await page.getByTestId('ferry-files').evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await expect.poll(() => page.locator('.ferry-file-name').last().textContent()).toBe('file-9999.txt');
  expect(await page.getByTestId('ferry-file').count()).toBeLessThan(30);
  // Generous bound: the point is no per-file work; the bench reports the real figure.
  expect(ms).toBeLessThan(5000);
  await page.close();
});

test('thumbnails are made lazily: only for the rows in view', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(64, 48);
    const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
    ctx.fillStyle = '#c33';
    ctx.fillRect(0, 0, 64, 48);
    const png = await canvas.convertToBlob({ type: 'image/png' });
    window.ferry?.addFiles(
      Array.from({ length: 500 }, (_, i) => ({
        data: new File([png], `img-${i}.png`, { type: 'image/png' }),
        source: 'local',
      })),
    );
  });
  const withPreview = () => page.evaluate(() => window.ferry?.getFiles().filter((f) => f.preview).length ?? 0);
  const rows = await page.getByTestId('ferry-file').count();
  await expect.poll(withPreview).toBe(rows);
  expect(rows).toBeLessThan(30);
  // Scrolling to the end makes thumbnails for the rows now in view, and only those.
  await page.getByTestId('ferry-files').evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await expect.poll(() => page.locator('.ferry-file-name').last().textContent()).toBe('img-499.png');
  await expect.poll(() => page.evaluate(() => !!window.ferry?.getFiles().at(-1)?.preview)).toBe(true);
  expect(await withPreview()).toBeLessThan(2 * rows + 1);
  await page.close();
});
