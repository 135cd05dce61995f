/** A person picks three files in the Dashboard and uploads them; the server holds exactly them. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { type RunningFerry, sha256, startFerry, storedTusUploads } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-fixtures-'));
});

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await rm(fixtures, { recursive: true, force: true });
});

test('three picked files upload through the Dashboard byte for byte', async () => {
  const files = [
    { name: 'one-kib.bin', bytes: randomBytes(1024) },
    { name: 'three-mib.bin', bytes: randomBytes(3 * 1024 * 1024) },
    { name: 'twelve-mib.bin', bytes: randomBytes(12 * 1024 * 1024) },
  ];
  for (const f of files) await writeFile(join(fixtures, f.name), f.bytes);

  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(files.map((f) => join(fixtures, f.name)));
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(3);

  await page.getByRole('button', { name: /^Upload 3 files$/ }).click();
  await expect.poll(() => page.getByTestId('ferry-status').textContent(), { timeout: 60_000 }).toBe('Complete');
  const states = await page
    .getByTestId('ferry-file')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
  expect(states).toEqual(['complete', 'complete', 'complete']);

  const stored = await storedTusUploads(ferry.dataDir);
  expect(stored).toHaveLength(3);
  for (const f of files) {
    const match = stored.find((s) => s.filename === f.name);
    expect(match, `stored upload for ${f.name}`).toBeDefined();
    expect(match?.size).toBe(f.bytes.length);
    expect(match?.sha256).toBe(sha256(f.bytes));
  }
});
