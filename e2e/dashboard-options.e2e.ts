/**
 * The Dashboard's options in Chromium against the real `ferry`: result links (`resultLinks`) open
 * the stored bytes; the status bar lists per-file errors; every language pack renders (a
 * screenshot each under e2e/screenshots/, Arabic laid out right to left by computed direction);
 * the image editor (`imageEditor`) crops, turns and mirrors into a file of the expected size and
 * pixels, which is what the server stores; the compressor shrinks before upload; screen capture is
 * offered where the browser can. axe-core finds no serious or critical violation in these views.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { axeViolations, screenshot, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, sha256, startFerry } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
});

async function open(query = ''): Promise<Page> {
  // The demo keeps files across page loads (recovery): each page starts from a clean origin.
  await clearSiteData(browser.context, ferry.url);
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 900, height: 760 });
  await page.goto(`${ferry.url}/${query}`);
  await expect.poll(() => page.locator('.ferry-dashboard').count()).toBe(1);
  return page;
}

test('after upload each file links to its result: an image opens in a tab, other bytes download; both as stored', async () => {
  const page = await open();
  const bytes = randomBytes(300 * 1024);
  await page.evaluate(async (b64) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const canvas = new OffscreenCanvas(64, 48);
    const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
    ctx.fillStyle = '#3a7bd5';
    ctx.fillRect(0, 0, 64, 48);
    const png = await canvas.convertToBlob({ type: 'image/png' });
    window.ferry?.addFiles([
      { data: new File([data], 'result.bin', { type: 'application/octet-stream' }) },
      { data: new File([png], 'result.png', { type: 'image/png' }) },
    ]);
  }, bytes.toString('base64'));
  expect(await page.getByRole('link', { name: 'Open file result.bin' }).count()).toBe(0);
  await page.getByRole('button', { name: 'Upload 2 files' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  expect(await page.getByRole('button', { name: 'Copy link result.bin' }).count()).toBe(1);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'result-links');
  const stored = await storedWithMeta(ferry.dataDir);

  // The binary is served as an attachment: the link downloads exactly the bytes sent.
  const binLink = page.getByRole('link', { name: 'Open file result.bin' });
  expect((await binLink.getAttribute('href'))?.startsWith(`${ferry.url}/files/`)).toBe(true);
  const [download] = await Promise.all([page.waitForEvent('download'), binLink.click()]);
  const path = await download.path();
  expect(sha256(await readFile(path))).toBe(sha256(bytes));
  expect(stored.find((s) => s.filename === 'result.bin')?.sha256).toBe(sha256(bytes));

  // The image opens in a new tab; the bytes the tab got are the ones stored.
  const pngLink = page.getByRole('link', { name: 'Open file result.png' });
  const href = (await pngLink.getAttribute('href')) ?? '';
  const [tab] = await Promise.all([page.context().waitForEvent('page'), pngLink.click()]);
  await tab.waitForLoadState();
  expect(tab.url()).toBe(href);
  const body = Buffer.from(
    await tab.evaluate(async () => {
      const b = new Uint8Array(await (await fetch(location.href)).arrayBuffer());
      let s = '';
      for (const x of b) s += String.fromCharCode(x);
      return btoa(s);
    }),
    'base64',
  );
  expect(sha256(body)).toBe(stored.find((s) => s.filename === 'result.png')?.sha256);
  expect(await tab.evaluate(() => (document.querySelector('img') as HTMLImageElement | null)?.naturalWidth)).toBe(64);
  await tab.close();
  await page.close();
});

test('the status bar lists per-file errors with a retry each, and passes axe-core', async () => {
  const page = await open();
  let refuse = true;
  await page.route('**/files/**', (route) =>
    refuse && route.request().method() === 'POST'
      ? route.fulfill({ status: 500, body: 'disk on fire' })
      : route.continue(),
  );
  await page.evaluate(() => {
    window.ferry?.addFile({ data: new File(['one'], 'first.txt', { type: 'text/plain' }) });
  });
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('1 file failed to upload');
  await page.getByRole('button', { name: 'Show errors' }).click();
  const row = page.getByTestId('ferry-status-error');
  expect(await row.textContent()).toMatch(/^first\.txt: /);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'status-errors');
  refuse = false;
  await row.getByRole('button', { name: 'Retry upload first.txt' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  const stored = (await storedWithMeta(ferry.dataDir)).filter((s) => s.filename === 'first.txt');
  expect(stored.map((s) => s.sha256)).toEqual([sha256(Buffer.from('one'))]);
  await page.close();
});

/** What each pack says for one selected file, and which way it reads. */
const locales: [string, string, 'ltr' | 'rtl'][] = [
  ['en', '1 file selected', 'ltr'],
  ['de', '1 Datei ausgewählt', 'ltr'],
  ['fr', '1 fichier sélectionné', 'ltr'],
  ['es', '1 archivo seleccionado', 'ltr'],
  ['pt-BR', '1 arquivo selecionado', 'ltr'],
  ['ja', '1 個のファイルを選択中', 'ltr'],
  ['zh-CN', '已选择 1 个文件', 'ltr'],
  ['ar', 'تم تحديد ملف واحد', 'rtl'],
];

test('every language pack renders, Arabic right to left; the switch changes language live', async () => {
  for (const [code, selected, direction] of locales) {
    const page = await open(`?lang=${code}`);
    await page.evaluate(() => {
      window.ferry?.addFile({ data: new File(['x'.repeat(2048)], 'notes.txt', { type: 'text/plain' }) });
    });
    await expect.poll(() => statusText(page)).toBe(selected);
    const root = page.locator('.ferry-dashboard');
    expect(await root.getAttribute('lang')).toBe(code);
    expect(await root.evaluate((el) => getComputedStyle(el).direction)).toBe(direction);
    // Laid out the reading way: in Arabic the file's name sits right of its actions.
    const name = await page.locator('.ferry-file-name').boundingBox();
    const actions = await page.locator('.ferry-file-actions').boundingBox();
    if (!name || !actions) throw new Error('row not laid out');
    expect(direction === 'rtl' ? name.x > actions.x : name.x < actions.x).toBe(true);
    if (code === 'ar' || code === 'ja') expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, `locale-${code}`);
    await page.close();
  }

  const page = await open();
  await page.getByLabel('Language').selectOption('ar');
  await expect.poll(() => page.locator('.ferry-dashboard').getAttribute('dir')).toBe('rtl');
  expect(await page.getByRole('region', { name: 'رفع الملفات' }).count()).toBe(1);
  expect(new URL(page.url()).searchParams.get('lang')).toBe('ar');
  await page.close();
});

/** Adds a 400x300 PNG: left half red, right half blue. */
async function addTwoColourPng(page: Page, name: string): Promise<void> {
  await page.evaluate(async (name) => {
    const canvas = new OffscreenCanvas(400, 300);
    const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
    ctx.fillStyle = '#ff0000';
    ctx.fillRect(0, 0, 200, 300);
    ctx.fillStyle = '#0000ff';
    ctx.fillRect(200, 0, 200, 300);
    const png = await canvas.convertToBlob({ type: 'image/png' });
    window.ferry?.addFile({ data: new File([png], name, { type: 'image/png' }), meta: { caption: 'kept' } });
  }, name);
}

/** Size and a few pixels of the file's current bytes, decoded in the page. */
async function inspect(page: Page, name: string, points: [number, number][]) {
  return page.evaluate(
    async ({ name, points }) => {
      const file = window.ferry?.getFiles().find((f) => f.name === name);
      if (!file?.data) return null;
      const bitmap = await createImageBitmap(file.data);
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
      ctx.drawImage(bitmap, 0, 0);
      const colours = points.map(([x, y]) => {
        const [r, g, b] = ctx.getImageData(x, y, 1, 1).data;
        return (r ?? 0) > 200 && (b ?? 0) < 50 ? 'red' : (b ?? 0) > 200 && (r ?? 0) < 50 ? 'blue' : `${r},${g},${b}`;
      });
      const bytes = new Uint8Array(await file.data.arrayBuffer());
      let s = '';
      for (const b of bytes) s += String.fromCharCode(b);
      return { width: bitmap.width, height: bitmap.height, colours, meta: file.meta, b64: btoa(s) };
    },
    { name, points },
  );
}

test('the image editor crops, turns and mirrors into a new file of the expected size, and that is what is stored', async () => {
  const page = await open();
  await addTwoColourPng(page, 'photo.png');
  await page.getByRole('button', { name: 'Edit file photo.png' }).click();
  await page.getByRole('button', { name: 'Edit image' }).click();
  const crop = page.getByTestId('ferry-editor-crop');
  await expect.poll(() => crop.getAttribute('aria-label')).toBe('Crop area: 400 × 300');
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'image-editor');

  // Free crop from the keyboard: Shift+arrows pull the bottom-right corner in 4 px steps.
  await crop.focus();
  for (let i = 0; i < 25; i++) await page.keyboard.press('Shift+ArrowLeft');
  for (let i = 0; i < 25; i++) await page.keyboard.press('Shift+ArrowUp');
  expect(await crop.getAttribute('aria-label')).toBe('Crop area: 300 × 200');
  // Kept: x 0..300 (red 0..200, blue 200..300), y 0..200. A quarter turn right stands it
  // 200 wide and 300 high, the red part on top; a mirror top-to-bottom puts blue on top.
  await page.getByRole('button', { name: 'Rotate right' }).click();
  expect(await crop.getAttribute('aria-label')).toBe('Crop area: 200 × 300');
  await page.getByRole('button', { name: 'Flip vertically' }).click();
  await screenshot(page, 'image-editor-cropped');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect.poll(() => page.locator('.ferry-panel').count()).toBe(0);

  const edited = await inspect(page, 'photo.png', [
    [100, 20],
    [100, 200],
    [100, 280],
  ]);
  expect(edited && [edited.width, edited.height]).toEqual([200, 300]);
  expect(edited?.colours).toEqual(['blue', 'red', 'red']);
  expect(edited?.meta).toMatchObject({ caption: 'kept', name: 'photo.png' });

  // A fixed ratio: square on a 400x300 image keeps a centred 300x300.
  await addTwoColourPng(page, 'square.png');
  await page.getByRole('button', { name: 'Edit file square.png' }).click();
  await page.getByRole('button', { name: 'Edit image' }).click();
  await expect.poll(() => crop.getAttribute('aria-label')).toBe('Crop area: 400 × 300');
  await page.getByLabel('Aspect ratio').selectOption({ label: 'Square (1:1)' });
  expect(await crop.getAttribute('aria-label')).toBe('Crop area: 300 × 300');
  await page.getByRole('button', { name: 'Flip horizontally' }).click();
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect.poll(() => page.locator('.ferry-panel').count()).toBe(0);
  const square = await inspect(page, 'square.png', [
    [20, 150],
    [280, 150],
  ]);
  expect(square && [square.width, square.height]).toEqual([300, 300]);
  // Kept x 50..350 (red to 200, blue after), mirrored: blue on the left.
  expect(square?.colours).toEqual(['blue', 'red']);

  // The thumbnail follows the edit, and the server stores the edited bytes.
  await expect.poll(() => page.locator('.ferry-file img.ferry-thumb').count()).toBe(2);
  await page.getByRole('button', { name: 'Upload 2 files' }).click();
  await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('Complete');
  const stored = await storedWithMeta(ferry.dataDir);
  expect(stored.find((s) => s.filename === 'photo.png')?.sha256).toBe(sha256(Buffer.from(edited?.b64 ?? '', 'base64')));
  expect(stored.find((s) => s.filename === 'square.png')?.sha256).toBe(
    sha256(Buffer.from(square?.b64 ?? '', 'base64')),
  );
  await page.close();
});

test('the compressor shrinks an image before upload, showing its progress', async () => {
  const page = await open('?compress');
  await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(3000, 2000);
    const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
    for (let i = 0; i < 300; i++) {
      ctx.fillStyle = `hsl(${i}, 80%, 50%)`;
      ctx.fillRect((i * 97) % 3000, (i * 53) % 2000, 300, 200);
    }
    const jpeg = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.95 });
    window.ferry?.addFile({ data: new File([jpeg], 'big.jpg', { type: 'image/jpeg' }) });
  });
  const before = await page.evaluate(() => window.ferry?.getFiles()[0]?.size ?? 0);
  const seen = page.evaluate(
    () => new Promise<string>((ok) => window.ferry?.on('preprocess-progress', (_, p) => ok(`${p.message} ${p.mode}`))),
  );
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  expect(await seen).toBe('Compressing images... determinate');
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const after = await inspect(page, 'big.jpg', []);
  expect(after && [after.width, after.height]).toEqual([1920, 1280]);
  const stored = (await storedWithMeta(ferry.dataDir)).find((s) => s.filename === 'big.jpg');
  expect(stored?.size).toBeLessThan(before);
  expect(stored?.sha256).toBe(sha256(Buffer.from(after?.b64 ?? '', 'base64')));
  await page.close();
});

test('screen capture is offered where the browser has getDisplayMedia, and its panel passes axe-core', async () => {
  const page = await open();
  const supported = await page.evaluate(() => typeof navigator.mediaDevices?.getDisplayMedia === 'function');
  expect(supported).toBe(true);
  await page.getByRole('button', { name: 'Screen' }).click();
  expect(await page.getByRole('button', { name: 'Take a screenshot' }).count()).toBe(1);
  expect(await page.getByRole('button', { name: 'Start screen recording' }).count()).toBe(1);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'screen-capture');
  await page.close();
});
