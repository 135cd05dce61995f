/**
 * Every local source of the Dashboard against the real `ferry`: the folder input, a dropped
 * folder tree (synthesised DataTransfer with directory entries), paste, and an upload done with
 * the keyboard only. Each checks the bytes and the relativePath the server stored.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { sha256, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-sources-'));
});
afterAll(async () => {
  await browser?.close();
  await rm(fixtures, { recursive: true, force: true });
});
beforeEach(async () => {
  ferry = await startFerry();
  page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
});
afterEach(async () => {
  await page?.close();
  await ferry?.stop();
});

async function uploadAndWait(count: number) {
  await page.getByRole('button', { name: count === 1 ? 'Upload 1 file' : `Upload ${count} files` }).click();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
}

test('a folder picked with the folder input keeps each file’s relativePath', async () => {
  const root = join(fixtures, 'album');
  await mkdir(join(root, 'raw'), { recursive: true });
  const a = randomBytes(2048);
  const b = randomBytes(70_000);
  await writeFile(join(root, 'a.bin'), a);
  await writeFile(join(root, 'raw', 'b.bin'), b);

  await page.locator('input[type=file][webkitdirectory]').first().setInputFiles(root);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(2);
  await uploadAndWait(2);

  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.map((s) => [s.relativePath, s.sha256]).sort()).toEqual(
    [
      ['album/a.bin', sha256(a)],
      ['album/raw/b.bin', sha256(b)],
    ].sort(),
  );
});

test('a dropped folder tree is walked recursively, keeping relativePath', async () => {
  // The page builds File objects from these bytes and a directory-entry tree around them, as
  // Chromium's drop of a real folder would (a DataTransfer with directory entries cannot be
  // made by script otherwise).
  const files = {
    'photos/top.bin': randomBytes(1000),
    'photos/2024/june/deep.bin': randomBytes(300_000),
    'photos/2024/mid.bin': randomBytes(5),
  };
  const loose = randomBytes(4096);
  const payload = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.toString('base64')]));
  await page.evaluate(
    ({ payload, loose }) => {
      const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      type Node = { name: string; fullPath: string; file?: File; children: Map<string, Node> };
      const root: Node = { name: '', fullPath: '', children: new Map() };
      for (const [path, b64] of Object.entries(payload)) {
        const parts = path.split('/');
        let node = root;
        parts.forEach((part, i) => {
          let child = node.children.get(part);
          if (!child) {
            child = { name: part, fullPath: `${node.fullPath}/${part}`, children: new Map() };
            node.children.set(part, child);
          }
          if (i === parts.length - 1) child.file = new File([bytes(b64)], part);
          node = child;
        });
      }
      const entry = (node: Node): unknown =>
        node.file
          ? {
              isFile: true,
              isDirectory: false,
              name: node.name,
              fullPath: node.fullPath,
              file: (ok: (f: File) => void) => ok(node.file as File),
            }
          : {
              isFile: false,
              isDirectory: true,
              name: node.name,
              fullPath: node.fullPath,
              createReader() {
                // Answer in batches of one, then empty, as readEntries may.
                const rest = [...node.children.values()];
                return {
                  readEntries: (ok: (e: unknown[]) => void) => ok(rest.length ? [entry(rest.shift() as Node)] : []),
                };
              },
            };
      const looseFile = new File([bytes(loose)], 'loose.bin');
      const dt = new DataTransfer();
      dt.items.add(looseFile);
      const items = [
        { kind: 'file', webkitGetAsEntry: () => entry(root.children.get('photos') as Node) },
        {
          kind: 'file',
          webkitGetAsEntry: () => ({
            isFile: true,
            isDirectory: false,
            name: 'loose.bin',
            fullPath: '/loose.bin',
            file: (ok: (f: File) => void) => ok(looseFile),
          }),
        },
      ];
      Object.defineProperty(dt, 'items', { value: items });
      const target = document.querySelector('.ferry-dashboard') as HTMLElement;
      for (const type of ['dragenter', 'dragover']) {
        target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
      }
      (window as unknown as { dropNow: () => void }).dropNow = () =>
        target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { payload, loose: loose.toString('base64') },
  );
  // While files are dragged over, the drop hint shows; the drop removes it.
  await expect.poll(() => page.locator('.ferry-drop-hint').textContent()).toBe('Drop your files here');
  await page.evaluate(() => (window as unknown as { dropNow: () => void }).dropNow());
  await expect.poll(() => page.locator('.ferry-drop-hint').count()).toBe(0);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(4);
  await uploadAndWait(4);

  const stored = await storedWithMeta(ferry.dataDir);
  const got = stored.map((s) => [s.filename, s.relativePath ?? null, s.sha256]).sort();
  const want = [
    ...Object.entries(files).map(([path, b]) => [path.split('/').pop(), path, sha256(b)]),
    ['loose.bin', null, sha256(loose)],
  ].sort();
  expect(got).toEqual(want);
});

test('files pasted into the focused Dashboard are added and upload', async () => {
  const bytes = randomBytes(50_000);
  await page.locator('.ferry-dashboard').focus();
  await page.evaluate((b64) => {
    const dt = new DataTransfer();
    dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'pasted.png', { type: 'image/png' }));
    document.activeElement?.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }),
    );
  }, bytes.toString('base64'));
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  // Not a decodable PNG: the thumbnail fails and the row says so instead of showing an image.
  await expect.poll(() => page.locator('[data-failed]').getAttribute('title')).toBe('cannot read image');
  await uploadAndWait(1);
  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.map((s) => [s.filename, s.sha256])).toEqual([['pasted.png', sha256(bytes)]]);
});

test('a file picked and uploaded with the keyboard only', async () => {
  const bytes = randomBytes(200_000);
  const path = join(fixtures, 'keyboard.bin');
  await writeFile(path, bytes);

  /** Presses Tab until the focused element's accessible text matches, at most 20 times. */
  async function tabTo(text: RegExp): Promise<void> {
    for (let i = 0; i < 20; i += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
      if (text.test(focused)) return;
    }
    throw new Error(`never reached ${text} with Tab`);
  }

  // Playwright turns on file-chooser interception when the first listener is added, and that
  // takes a round trip to the browser: listen before tabbing, so it is on before Enter.
  const chooser = page.waitForEvent('filechooser');
  await tabTo(/^browse files$/);
  await page.keyboard.press('Enter');
  await (await chooser).setFiles(path);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(1);
  await tabTo(/^Upload 1 file$/);
  await page.keyboard.press('Enter');
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.map((s) => [s.filename, s.sha256])).toEqual([['keyboard.bin', sha256(bytes)]]);
});

test('a slow upload paused from its row and resumed finishes with the right bytes', async () => {
  const bytes = randomBytes(3 * 1024 * 1024);
  const path = join(fixtures, 'slow.bin');
  await writeFile(path, bytes);
  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(path);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 10,
    downloadThroughput: -1,
    uploadThroughput: 512 * 1024,
  });
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 20_000 }).toMatch(/^Uploading: [1-9]\d?%$/);
  await page.getByRole('button', { name: 'Pause upload slow.bin' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').getAttribute('data-state')).toBe('paused');
  await expect.poll(() => statusText(page)).toMatch(/^Paused: \d+%$/);
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  await page.getByRole('button', { name: 'Resume upload slow.bin' }).click();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.map((s) => [s.filename, s.sha256])).toEqual([['slow.bin', sha256(bytes)]]);
});
