/**
 * Recovery tells the truth when the tab closes at the moment an upload finishes, as a person
 * closes it when the bar turns green: a few hundred small files go up through the demo page, the
 * page is closed the moment the server holds every one of them (the test watches the server's
 * data directory), and the page is opened again. Nothing it restores may ask for work the
 * server has done (no "Add N files again", nothing waiting or re-sent), and a file added now
 * uploads. `RECOVERY_CLOSE_RUNS` repeats the round (default 1), `RECOVERY_CLOSE_FILES` sets the
 * batch (default 300).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, clearSiteData, launchBrowser } from './support/browser.ts';
import { sha256, statusText, storedWithMeta } from './support/dashboard.ts';
import { type RunningFerry, repoRoot, startFerry } from './support/ferry.ts';

const FILES = Number(process.env.RECOVERY_CLOSE_FILES ?? 300);
const RUNS = Number(process.env.RECOVERY_CLOSE_RUNS ?? 1);

let ferry: RunningFerry;
let browser: Browser;
let fixtures: string;

beforeAll(async () => {
  ferry = await startFerry(['--ui-dir', join(repoRoot, 'apps', 'demo', 'dist')]);
  browser = await launchBrowser();
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-recovery-close-'));
});
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await rm(fixtures, { recursive: true, force: true });
});

/** Ids of the uploads in the data directory the server holds whole (all `length` bytes). */
async function whole(dataDir: string, known: Set<string>): Promise<Set<string>> {
  const dir = join(dataDir, 'tus');
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.info')) continue;
    const id = name.slice(0, -'.info'.length);
    if (known.has(id)) continue;
    // The info file keeps the length; the bytes held are the data file's (the fs store reads its
    // offset from there). The store writes a new upload's info in place after creating the file,
    // so one being created can read empty: not held yet.
    let info: { length?: number | null };
    try {
      info = JSON.parse(await readFile(join(dir, name), 'utf8'));
    } catch {
      continue;
    }
    const size = await stat(join(dir, id)).then(
      (s) => s.size,
      () => -1,
    );
    if (typeof info.length === 'number' && size === info.length) known.add(id);
  }
  return known;
}

/** What the reopened page shows once recovery has read its records back. */
async function restored(page: Page) {
  return page.evaluate(async () => {
    const ferry = window.ferry;
    await ferry?.recovery?.ready();
    const files = ferry?.getFiles() ?? [];
    return {
      snapshot: ferry?.recovery?.getSnapshot(),
      notDone: files
        .filter((f) => f.state !== 'complete')
        .map((f) => ({ name: f.name, state: f.state, ghost: !!f.ghost })),
      count: files.length,
    };
  });
}

test('a ghost holds no file added meanwhile back: the Upload button shows, and the new file uploads', async () => {
  await clearSiteData(browser.context, ferry.url);
  const kept = randomBytes(4096);
  const fresh = randomBytes(3000);
  await writeFile(join(fixtures, 'ghost-kept.bin'), kept);
  await writeFile(join(fixtures, 'ghost-fresh.bin'), fresh);
  // Copies are capped at 1 KiB: the 4 KiB file, added and not uploaded, comes back as a ghost.
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/?recoveryMaxCopy=1024`);
  await page.locator('input[type=file]:not([webkitdirectory])').first().setInputFiles(join(fixtures, 'ghost-kept.bin'));
  await expect.poll(() => page.getByRole('button', { name: 'Upload 1 file' }).count()).toBe(1);
  await page.evaluate(() => window.ferry?.recovery?.flush());
  await page.reload();
  const seen = await restored(page);
  expect(seen.snapshot?.ghosts).toHaveLength(1);
  expect(await page.getByTestId('ferry-recovery').textContent()).toContain('Add 1 file again to continue its upload.');

  await page
    .locator('input[type=file]:not([webkitdirectory])')
    .first()
    .setInputFiles(join(fixtures, 'ghost-fresh.bin'));
  await page.getByRole('button', { name: 'Upload 1 file' }).click();
  await expect
    .poll(() => page.evaluate(() => window.ferry?.getFiles().find((f) => f.name === 'ghost-fresh.bin')?.state))
    .toBe('complete');
  const stored = (await storedWithMeta(ferry.dataDir)).filter((s) => s.filename?.startsWith('ghost-'));
  expect(stored.map((s) => [s.filename, s.sha256])).toEqual([['ghost-fresh.bin', sha256(fresh)]]);
  // The ghost still waits for its file.
  expect(await page.getByTestId('ferry-file').first().getAttribute('data-ghost')).toBe('true');
  await page.close();
});

test(
  `${FILES} small files, the tab closed the moment the server holds them all: nothing false after reopening (${RUNS} run(s))`,
  async () => {
    const round = async (run: number) => {
      await clearSiteData(browser.context, ferry.url);
      const before = (await storedWithMeta(ferry.dataDir)).length;
      const bodies = new Map<string, Buffer>();
      const paths: string[] = [];
      for (let i = 0; i < FILES; i += 1) {
        const name = `r${run}-small-${String(i).padStart(4, '0')}.bin`;
        const bytes = randomBytes(1024 + ((i * 37) % 3072));
        bodies.set(name, bytes);
        paths.push(join(fixtures, name));
        await writeFile(join(fixtures, name), bytes);
      }

      const page = await browser.context.newPage();
      await page.goto(`${ferry.url}/`);
      await page.locator('input[type=file]:not([webkitdirectory])').first().setInputFiles(paths);
      // What the page had not heard complete when it went away: an upload whose answer had not
      // reached it (a small file's URL comes with that answer) cannot be asked about, and is sent
      // again. Everything else must come back complete.
      await page.evaluate(() => {
        addEventListener('pagehide', () => {
          const unheard = (window.ferry?.getFiles() ?? []).filter((f) => f.state !== 'complete').map((f) => f.name);
          localStorage.setItem('unheard', JSON.stringify(unheard));
        });
      });
      await page.getByRole('button', { name: `Upload ${FILES} files` }).click();
      // Closed the moment the server holds every file, whatever the page has heard by then.
      const held = new Set<string>();
      const deadline = Date.now() + 120_000;
      while ((await whole(ferry.dataDir, held)).size < before + FILES) {
        if (Date.now() > deadline) throw new Error(`the server holds ${held.size - before} of ${FILES} files`);
        await new Promise((ok) => setTimeout(ok, 5));
      }
      await page.close();

      const again = await browser.context.newPage();
      await again.goto(`${ferry.url}/`);
      const seen = await restored(again);
      const unheard = new Set(
        JSON.parse((await again.evaluate(() => localStorage.getItem('unheard'))) ?? '[]') as string[],
      );
      // No ghost, no "Add N files again": every file the page knew complete comes back complete;
      // one it had not heard of is sent again at once, without waiting for the person.
      expect(seen.snapshot?.ghosts).toEqual([]);
      expect(seen.notDone.filter((f) => !unheard.has(f.name) || f.ghost || f.state === 'paused')).toEqual([]);
      const banner = again.getByTestId('ferry-recovery');
      if (await banner.count()) expect(await banner.textContent()).not.toContain('again');
      if (seen.count > 0) await expect.poll(() => statusText(again), { timeout: 30_000 }).toBe('Complete');

      // A file added now can be uploaded: the Upload button is there for it.
      const fresh = randomBytes(5000);
      const freshName = `r${run}-new.bin`;
      await writeFile(join(fixtures, freshName), fresh);
      await again.locator('input[type=file]:not([webkitdirectory])').first().setInputFiles(join(fixtures, freshName));
      await again.getByRole('button', { name: 'Upload 1 file' }).click();
      await expect.poll(() => statusText(again), { timeout: 30_000 }).toBe('Complete');

      // Every file is on the server byte-exact, and once, but for one sent again as above.
      const stored = (await storedWithMeta(ferry.dataDir)).filter((s) => s.filename?.startsWith(`r${run}-`));
      const expected = new Map([...bodies].map(([name, bytes]) => [name, sha256(bytes)]));
      expected.set(freshName, sha256(fresh));
      expect(new Map(stored.map((s) => [s.filename, s.sha256]))).toEqual(expected);
      const times = new Map<string, number>();
      for (const s of stored) times.set(s.filename ?? '', (times.get(s.filename ?? '') ?? 0) + 1);
      expect([...times].filter(([name, n]) => n > 1 && !unheard.has(name))).toEqual([]);
      await again.close();
    };
    for (let run = 0; run < RUNS; run += 1) await round(run);
  },
  RUNS * 120_000,
);
