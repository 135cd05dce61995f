/**
 * Ferry's Dashboard with the `assembly` option against `ferry serve --assembly-key/--assembly-secret`
 * in Chromium: a picked 400x300 image goes through a signed Assembly with an `/image/resize` step
 * (fit into 100x100 as PNG); the file ends `complete`, its record carries the result, the
 * Dashboard shows the result's thumbnail, and the result's bytes are a 100x75 PNG.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build, defaultClientConditions } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

const KEY = 'widget-key';
const SECRET = 'widget-secret';
let ferry: RunningFerry;
let browser: Browser;
let site: string;
let fixtures: string;

beforeAll(async () => {
  site = await mkdtemp(join(tmpdir(), 'ferry-assembly-page-'));
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-assembly-files-'));
  await build({
    root: resolve(import.meta.dirname, 'pages', 'assembly'),
    logLevel: 'error',
    configFile: false,
    resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
    build: { outDir: site, emptyOutDir: true, minify: false },
  });
  ferry = await startFerry(['--ui-dir', site, '--assembly-key', KEY, '--assembly-secret', SECRET]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  for (const dir of [site, fixtures]) if (dir) await rm(dir, { recursive: true, force: true });
});

/** What the application's signing endpoint does: params with an expiry, HMAC-SHA384 with the secret. */
function sign(): { params: string; signature: string } {
  const params = JSON.stringify({
    auth: { key: KEY, expires: new Date(Date.now() + 10 * 60_000).toISOString() },
    steps: {
      ':original': { robot: '/upload/handle' },
      small: { robot: '/image/resize', use: ':original', width: 100, height: 100, format: 'png', result: true },
    },
  });
  return { params, signature: `sha384:${createHmac('sha384', SECRET).update(params).digest('hex')}` };
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect(Array.from(bytes.subarray(1, 4), (b) => String.fromCharCode(b)).join('')).toBe('PNG');
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

test('a picked image is resized by an Assembly and its result shown in the Dashboard', async () => {
  const page = await browser.context.newPage();
  await page.exposeFunction('signAssembly', sign);
  await page.goto(`${ferry.url}/`);
  // A real 400x300 JPEG, drawn by the browser.
  const jpeg = await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(400, 300);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d context');
    ctx.fillStyle = '#c33';
    ctx.fillRect(0, 0, 400, 300);
    ctx.fillStyle = '#33c';
    ctx.fillRect(100, 75, 200, 150);
    const blob = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.9 });
    return Array.from(new Uint8Array(await blob.arrayBuffer()));
  });
  await writeFile(join(fixtures, 'photo.jpg'), new Uint8Array(jpeg));

  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(join(fixtures, 'photo.jpg'));
  await page.getByRole('button', { name: /^Upload 1 file$/ }).click();
  await expect.poll(() => page.getByTestId('ferry-status').textContent(), { timeout: 60_000 }).toBe('Complete');

  const record = await page.evaluate(() => {
    const [file] = window.ferry?.getFiles() ?? [];
    return { state: file?.state, error: file?.error, results: file?.results };
  });
  expect(record.error).toBeNull();
  expect(record.state).toBe('complete');
  const result = record.results?.small?.[0];
  expect(result?.mime).toBe('image/png');
  expect(result?.meta).toMatchObject({ width: 100, height: 75 });
  const url = String(result?.ssl_url ?? result?.url);

  const thumb = page.getByTestId('ferry-file-results').getByRole('img');
  await expect.poll(() => thumb.getAttribute('src')).toBe(url);
  // The browser decoded it: a real 100 px wide image at that address.
  await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(100);

  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(pngSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 100, height: 75 });
});
