/**
 * Link import through the real `ferry` as companion, from a local origin server: the panel adds
 * `http://` to a bare address, `POST /url/meta` names and sizes the file, the remote file uploads
 * through the companion, and bad input gets the spec's toasts for 4 s.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { axeViolations, screenshot, sha256, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

const report = randomBytes(300 * 1024);
let origin: Server;
let originHost = '';
let ferry: RunningFerry;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  origin = createServer((req, res) => {
    if (req.url === '/files/report.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': report.length });
      res.end(req.method === 'HEAD' ? undefined : report);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((ok) => origin.listen(0, '127.0.0.1', ok));
  originHost = `127.0.0.1:${(origin.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => origin?.close(ok));
});
beforeEach(async () => {
  // The origin is on loopback, which the companion refuses unless told otherwise.
  ferry = await startFerry(['--allow-local-urls']);
  page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
});
afterEach(async () => {
  await page?.close();
  await ferry?.stop();
});

async function importUrl(text: string) {
  await page.getByRole('button', { name: 'Link' }).click();
  await page.getByRole('textbox', { name: 'File URL' }).fill(text);
  await page.getByRole('button', { name: 'Import' }).click();
}

const infos = () => page.evaluate(() => window.ferry?.getState().info.map((i) => [i.message, i.duration]) ?? []);

test('a bare address gets http://, is named by /url/meta, and uploads through the companion', async () => {
  await importUrl(`${originHost}/files/report.pdf`);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  const file = await page.evaluate(() => {
    const f = window.ferry?.getFiles()[0];
    return f && { name: f.name, type: f.type, size: f.size, isRemote: f.isRemote, source: f.source, remote: f.remote };
  });
  expect(file).toEqual({
    name: 'report.pdf',
    type: 'application/pdf',
    size: report.length,
    isRemote: true,
    source: 'url',
    remote: {
      url: `http://${originHost}/files/report.pdf`,
      body: { url: `http://${originHost}/files/report.pdf` },
    },
  });
  await screenshot(page, 'link-imported');

  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.map((s) => [s.name, s.size, s.sha256])).toEqual([['report.pdf', report.length, sha256(report)]]);
});

test('a URL pasted into the Dashboard is imported', async () => {
  await page.locator('.ferry-dashboard').focus();
  await page.evaluate((url) => {
    const dt = new DataTransfer();
    dt.setData('text/plain', url);
    document.activeElement?.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }),
    );
  }, `http://${originHost}/files/report.pdf`);
  await expect.poll(() => page.locator('.ferry-file-name').textContent()).toBe('report.pdf');
});

test('only http and https: anything else is an incorrect URL for 4 s', async () => {
  await importUrl('ftp://example.com/file.bin');
  await expect
    .poll(() => page.getByTestId('ferry-toast').textContent())
    .toContain('Incorrect URL: Please make sure you are entering a direct link to a file');
  expect(await infos()).toEqual([['Incorrect URL: Please make sure you are entering a direct link to a file', 4000]]);
  expect(await page.getByTestId('ferry-file').count()).toBe(0);
});

test('a URL whose source fails gets the companion’s error answer: Failed to fetch the file, for 4 s', async () => {
  await importUrl(`http://${originHost}/nothing-here`);
  await expect.poll(infos).toEqual([['Failed to fetch the file', 4000]]);
  await page.getByRole('button', { name: 'Details' }).click();
  await expect.poll(() => page.locator('.ferry-toast-details').textContent()).not.toBe('');
  await screenshot(page, 'link-error');
  expect(await axeViolations(page)).toEqual([]);
  expect(await page.getByTestId('ferry-file').count()).toBe(0);
});
