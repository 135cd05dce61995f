/**
 * Hooks seen by a person: `ferry serve --hooks-http` points at a hook receiver (a small HTTP
 * server here) that refuses `.exe` files at pre-create with 403 and a JSON message. In the
 * Dashboard, the refused file's row shows that message whole (not tus-js-client's wrapper text),
 * nothing of it is stored, and the accepted file arrives, reported by post-finish with its size
 * and path.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { type RunningFerry, sha256, startFerry, storedTusUploads } from './support/ferry.ts';

interface HookEvent {
  Type: string;
  Event: {
    Upload: { ID: string; Size: number; MetaData: Record<string, string>; Storage: Record<string, string> | null };
  };
}

const REFUSAL = 'Executable files cannot be uploaded to this workspace, ask your administrator for an exception';

let receiver: Server;
let events: HookEvent[] = [];
let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as HookEvent;
      events.push(event);
      const name = event.Event.Upload.MetaData.filename ?? '';
      const answer =
        event.Type === 'pre-create' && name.endsWith('.exe')
          ? {
              RejectUpload: true,
              HTTPResponse: {
                StatusCode: 403,
                Body: JSON.stringify({ message: REFUSAL }),
                Header: { 'Content-Type': 'application/json' },
              },
            }
          : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  const hooks = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  ferry = await startFerry(['--hooks-http', hooks, '--hooks-enabled-events', 'pre-create,post-finish']);
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-hooks-'));
});

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await new Promise<void>((ok) => (receiver ? receiver.close(() => ok()) : ok()));
  await rm(fixtures, { recursive: true, force: true });
});

test('a pre-create refusal shows the hook message on the file row; the accepted file is stored', async () => {
  events = [];
  const report = randomBytes(300 * 1024);
  await writeFile(join(fixtures, 'report.pdf'), report);
  await writeFile(join(fixtures, 'setup.exe'), randomBytes(2048));

  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 900, height: 720 });
  await page.goto(`${ferry.url}/`);
  await page
    .locator('input[type=file]:not([webkitdirectory])')
    .setInputFiles([join(fixtures, 'report.pdf'), join(fixtures, 'setup.exe')]);
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(2);
  await page.getByRole('button', { name: /^Upload 2 files$/ }).click();

  const row = (name: string) => page.getByTestId('ferry-file').filter({ hasText: name });
  await expect.poll(() => row('setup.exe').getAttribute('data-state'), { timeout: 30_000 }).toBe('error');
  await expect.poll(() => row('report.pdf').getAttribute('data-state'), { timeout: 30_000 }).toBe('complete');
  // The row says what the hook said, whole, and nothing of the client library's wrapper.
  const state = row('setup.exe').locator('.ferry-file-state');
  expect(await state.textContent()).toBe(REFUSAL);
  const shown = await state.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const meta = el.closest('.ferry-file-meta')?.getBoundingClientRect();
    return { width: box.width, right: box.right, metaRight: meta?.right ?? 0 };
  });
  expect(shown.right).toBeLessThanOrEqual(shown.metaRight + 1);
  const rowText = await row('setup.exe').textContent();
  expect(rowText).not.toContain('tus:');
  // Refused: not retried (one pre-create for it), and nothing of it stored.
  expect(
    events.filter((e) => e.Type === 'pre-create' && e.Event.Upload.MetaData.filename === 'setup.exe'),
  ).toHaveLength(1);
  const stored = await storedTusUploads(ferry.dataDir);
  expect(stored.map((s) => s.filename)).toEqual(['report.pdf']);
  expect(stored[0]?.sha256).toBe(sha256(report));

  // post-finish reported the accepted file with its size and where it lies.
  await expect.poll(() => events.filter((e) => e.Type === 'post-finish').length, { timeout: 10_000 }).toBe(1);
  const finished = events.find((e) => e.Type === 'post-finish');
  expect(finished?.Event.Upload.Size).toBe(report.length);
  expect(finished?.Event.Upload.MetaData.filename).toBe('report.pdf');
  expect(finished?.Event.Upload.Storage?.Type).toBe('filestore');
  const path = finished?.Event.Upload.Storage?.Path ?? '';
  expect(path.startsWith(join(ferry.dataDir, 'tus'))).toBe(true);
  expect(sha256(await readFile(path))).toBe(sha256(report));
  await page.close();
});
