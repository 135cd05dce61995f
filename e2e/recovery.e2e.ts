/**
 * Recovery after a reload, in real Chromium against the real `ferry`: a 64 MiB tus upload
 * reloaded at about 30% comes back and finishes from the server's offset; a file too large to
 * copy comes back as a ghost and resumes when picked again; a link import reattaches to its
 * companion transfer. Each ends with exactly one upload on the server, byte-exact, and the
 * page's recovery storage empty. A file picked through `showOpenFilePicker` is kept as its handle
 * (no copy) and comes back from it; the picker is the page-level test hook here, returning a real
 * handle (to a file in the origin's private file system), since Playwright cannot drive the
 * native picker. (S3 multipart: recovery-s3.e2e.ts.)
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { patternBytes } from './support/core-page.ts';
import { sha256, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

const MiB = 1024 * 1024;
let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;
let page: Page;

beforeAll(async () => {
  ferry = await startFerry(['--allow-local-urls']);
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-recovery-'));
});
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await rm(fixtures, { recursive: true, force: true });
});
beforeEach(async () => {
  await clearSiteData(browser.context, ferry.url);
  page = await browser.context.newPage();
});
afterEach(async () => {
  await page?.close();
});

/** Slows the page's uploads (DevTools network throttling) so a reload lands mid-file. */
async function throttle(p: Page, bytesPerSecond: number): Promise<CDPSession> {
  const cdp = await browser.context.newCDPSession(p);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: bytesPerSecond,
  });
  return cdp;
}

async function unthrottle(cdp: CDPSession): Promise<void> {
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
}

const percentage = (p: Page) => p.evaluate(() => window.ferry?.getFiles()[0]?.progress.percentage ?? 0);
const stored = (p: Page) => p.evaluate(() => window.ferry?.recovery?.stored());

/** The tus requests the page makes: HEAD answers' offsets and PATCH start offsets, in order. */
function watchTus(p: Page) {
  const seen: { method: string; offset: number }[] = [];
  p.on('response', (response) => {
    const request = response.request();
    if (!new URL(request.url()).pathname.startsWith('/files/')) return;
    const method = request.method();
    if (method === 'HEAD') seen.push({ method, offset: Number(response.headers()['upload-offset']) });
    if (method === 'POST') seen.push({ method, offset: 0 });
  });
  p.on('request', (request) => {
    if (!new URL(request.url()).pathname.startsWith('/files/')) return;
    if (request.method() === 'PATCH')
      seen.push({ method: 'PATCH', offset: Number(request.headers()['upload-offset']) });
  });
  return seen;
}

async function uploadsOf(name: string) {
  return (await storedWithMeta(ferry.dataDir)).filter((s) => s.filename === name || s.name === name);
}

test('a 64 MiB upload reloaded at 30% comes back and finishes from the server offset, byte-exact', async () => {
  const bytes = randomBytes(64 * MiB);
  const path = join(fixtures, 'big-64.bin');
  await writeFile(path, bytes);
  await page.goto(`${ferry.url}/`);
  await page.locator('input[type=file]:not([webkitdirectory])').first().setInputFiles(path);
  const cdp = await throttle(page, 6 * MiB);
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => percentage(page), { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(30);
  const atReload = await percentage(page);
  expect(atReload).toBeLessThan(60);

  const tus = watchTus(page);
  await page.reload();
  await unthrottle(cdp);
  // The file is back, with the progress it had, and the message says so.
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  await expect
    .poll(() => page.getByTestId('ferry-recovery').textContent())
    .toContain('Restored 1 file from your last visit.');
  expect(await page.locator('.ferry-file-name').textContent()).toBe('big-64.bin');
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');

  // It asked the server where it stood and sent from exactly there: no new upload, no byte twice.
  const head = tus.find((r) => r.method === 'HEAD');
  const patch = tus.find((r) => r.method === 'PATCH');
  expect(tus.filter((r) => r.method === 'POST')).toEqual([]);
  expect(head?.offset).toBeGreaterThan(0.2 * bytes.length);
  expect(patch?.offset).toBe(head?.offset);
  const uploads = await uploadsOf('big-64.bin');
  expect(uploads.map((u) => [u.size, u.sha256])).toEqual([[bytes.length, sha256(bytes)]]);
  expect(await stored(page)).toEqual({ records: 0, copies: 0 });
});

test('a file too large to copy comes back as a ghost and resumes when picked again', async () => {
  const bytes = randomBytes(8 * MiB);
  const path = join(fixtures, 'ghost.bin');
  await writeFile(path, bytes);
  await page.goto(`${ferry.url}/?recoveryMaxCopy=${MiB}`);
  await page.locator('input[type=file]:not([webkitdirectory])').first().setInputFiles(path);
  const cdp = await throttle(page, MiB);
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => percentage(page), { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(30);

  const tus = watchTus(page);
  await page.reload();
  await unthrottle(cdp);
  const row = page.getByTestId('ferry-file');
  await expect.poll(() => row.getAttribute('data-ghost')).toBe('true');
  expect(await row.locator('.ferry-file-state').textContent()).toBe('Add this file again to resume');
  expect(await page.getByTestId('ferry-recovery').textContent()).toContain('Add 1 file again to continue its upload.');
  // Nothing is sent for a ghost: the page only asked the server (one HEAD, on restore) whether
  // the upload had finished meanwhile, and it had not.
  await page.waitForTimeout(300);
  expect(tus.map((r) => r.method)).toEqual(['HEAD']);
  expect(tus[0]?.offset).toBeLessThan(bytes.length);

  await page.locator('input[type=file]:not([webkitdirectory])').first().setInputFiles(path);
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  expect(await page.getByTestId('ferry-file').count()).toBe(1);
  const head = tus.find((r) => r.method === 'HEAD');
  expect(tus.filter((r) => r.method === 'POST')).toEqual([]);
  expect(head?.offset).toBeGreaterThan(0.2 * bytes.length);
  expect(tus.find((r) => r.method === 'PATCH')?.offset).toBe(head?.offset);
  const uploads = await uploadsOf('ghost.bin');
  expect(uploads.map((u) => [u.size, u.sha256])).toEqual([[bytes.length, sha256(bytes)]]);
  expect(await stored(page)).toEqual({ records: 0, copies: 0 });
});

test('a file picked through showOpenFilePicker is kept as its handle, not copied, and comes back from it', async () => {
  const size = 16 * MiB;
  // Copies are capped at 1 KiB: without its handle this file could only come back as a ghost.
  await page.goto(`${ferry.url}/?fileSystemAccess&recoveryMaxCopy=1024`);
  await page.evaluate(async (size) => {
    const root = await navigator.storage.getDirectory();
    const handle = await root.getFileHandle('handle.bin', { create: true });
    const writable = await handle.createWritable();
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 1) bytes[i] = (i * 31 + 51 + (i >> 13)) & 255;
    await writable.write(bytes);
    await writable.close();
    (window as unknown as { showOpenFilePicker: () => Promise<unknown[]> }).showOpenFilePicker = async () => [handle];
  }, size);
  await page.locator('button.ferry-browse', { hasText: /^browse files$/ }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  const cdp = await throttle(page, 2 * MiB);
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => percentage(page), { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(30);
  expect(await stored(page)).toEqual({ records: 1, copies: 0 });

  const tus = watchTus(page);
  await page.reload();
  await unthrottle(cdp);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  expect(await page.getByTestId('ferry-file').getAttribute('data-ghost')).toBeNull();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const head = tus.find((r) => r.method === 'HEAD');
  expect(tus.filter((r) => r.method === 'POST')).toEqual([]);
  expect(head?.offset).toBeGreaterThan(0.2 * size);
  expect(tus.find((r) => r.method === 'PATCH')?.offset).toBe(head?.offset);
  const uploads = await uploadsOf('handle.bin');
  expect(uploads.map((u) => [u.size, u.sha256])).toEqual([[size, sha256(patternBytes(size, 51))]]);
  expect(await stored(page)).toEqual({ records: 0, copies: 0 });
});

test('a link import reloaded mid-transfer reattaches to its companion transfer', async () => {
  const body = randomBytes(12 * MiB);
  let downloads = 0;
  // An origin that serves the file slowly (256 KiB every 50 ms: about 2.4 s for 12 MiB).
  const origin: Server = createServer((req, res) => {
    if (req.url !== '/slow.bin') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    if (req.method === 'HEAD') return void res.end();
    downloads += 1;
    let at = 0;
    const step = () => {
      if (at >= body.length) return void res.end();
      res.write(body.subarray(at, at + 256 * 1024));
      at += 256 * 1024;
      setTimeout(step, 50);
    };
    step();
  });
  await new Promise<void>((ok) => origin.listen(0, '127.0.0.1', ok));
  try {
    const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/slow.bin`;
    await page.goto(`${ferry.url}/`);
    await page.getByRole('button', { name: 'Link' }).click();
    await page.getByRole('textbox', { name: 'File URL' }).fill(url);
    await page.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
    await page.getByRole('button', { name: 'Upload 1 file' }).click();
    await expect.poll(() => percentage(page), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(30);
    const token = await page.evaluate(() => window.ferry?.getFiles()[0]?.serverToken);
    expect(token).toBeTruthy();

    await page.reload();
    await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
    expect(await page.evaluate(() => window.ferry?.getFiles()[0]?.serverToken)).toBe(token);
    await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
    expect(downloads).toBe(1);
    const uploads = await uploadsOf('slow.bin');
    expect(uploads.map((u) => [u.size, u.sha256])).toEqual([[body.length, sha256(body)]]);
    expect(await stored(page)).toEqual({ records: 0, copies: 0 });
  } finally {
    await new Promise((ok) => origin.close(ok));
  }
});
