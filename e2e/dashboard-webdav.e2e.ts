/**
 * Ferry's own Dashboard (the demo page, `providers: true`) with WebDAV, in real Chromium against
 * the real `ferry --webdav` and the fake WebDAV server (Nextcloud's layout, from `ferry-fakes`):
 * the WebDAV button (from `GET /providers`) opens a form for the server URL, not a popup; a
 * collection URL with a username and app password, and a public share link, each sign in through
 * `POST /webdav/simple-auth`, list, open a folder and import byte-exact into `ferry`'s tus
 * endpoint (stored bytes compared by sha256). Bad input shows the server's own message: a URL
 * that is no URL, and (on a `ferry` without `--allow-local-urls`) a server on a loopback address
 * its egress rules refuse; the form with its alert passes axe-core. A `ferry` without `--webdav`
 * shows no WebDAV button.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { axeViolations } from './support/dashboard.ts';
import { addUploadAndCompare, check, names, openFolder, startDemoFerry, want } from './support/dashboard-providers.ts';
import { type RunningFakes, SECRET, startFakes, webdavArgs } from './support/fakes.ts';
import { type RunningFerry, repoRoot, startFerry } from './support/ferry.ts';

let fakes: RunningFakes;
let browser: Browser;
const running: RunningFerry[] = [];
const pages: Page[] = [];

beforeAll(async () => {
  fakes = await startFakes();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fakes?.stop();
});
afterEach(async () => {
  for (const p of pages.splice(0)) await p.close();
  for (const f of running.splice(0)) await f.stop();
});

/** The demo page on a fresh `ferry` started with `args` (a fresh origin: no files kept). */
async function open(start: () => Promise<RunningFerry>): Promise<{ page: Page; ferry: RunningFerry }> {
  const ferry = await start();
  running.push(ferry);
  const page = await browser.context.newPage();
  pages.push(page);
  await page.goto(`${ferry.url}/`);
  return { page, ferry };
}

const withWebdav = () => startDemoFerry(fakes, webdavArgs(fakes.fixture));

/** Opens the WebDAV panel, fills the form and signs in. */
async function signIn(page: Page, form: { url: string; username?: string; password?: string }) {
  await page.getByRole('button', { name: 'WebDAV', exact: true }).click();
  await page.getByRole('form', { name: 'Sign in to WebDAV' }).waitFor();
  expect(await page.getByRole('button', { name: 'Connect to WebDAV' }).count()).toBe(0);
  await page.getByLabel('Server URL').fill(form.url);
  if (form.username !== undefined) await page.getByLabel('Username (optional)').fill(form.username);
  if (form.password !== undefined) await page.getByLabel('App password (optional)').fill(form.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** The alert the form shows once the server refused. */
async function refusal(page: Page): Promise<string | null> {
  const alert = page.locator('.ferry-provider-form [role="alert"]');
  await alert.waitFor({ timeout: 20_000 });
  return alert.textContent();
}

test('a collection URL with username and app password: list, open a folder, import three files byte-exact', async () => {
  const w = fakes.fixture.webdav;
  const { page, ferry } = await open(withWebdav);
  await signIn(page, { url: w.url, username: w.user, password: w.password });
  await expect.poll(() => names(page), { timeout: 20_000 }).toEqual(expect.arrayContaining(['Holiday', 'report.pdf']));
  await expect.poll(() => page.locator('.ferry-provider-user').textContent()).toContain(w.user);
  await check(page, 'report.pdf').check();
  await openFolder(page, 'Holiday');
  await expect.poll(() => names(page)).toEqual(expect.arrayContaining(['beach day.jpg', 'notes.txt']));
  await check(page, 'beach day.jpg').check();
  await check(page, 'notes.txt').check();
  // The password went to the server once, sealed in the token since: the page keeps none of it.
  expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain(w.password);
  await addUploadAndCompare(page, ferry, [
    want(w.files, 'report.pdf'),
    want(w.files, 'beach day.jpg'),
    want(w.files, 'notes.txt'),
  ]);
});

test('a public share link: the shared folder lists and a file imports byte-exact', async () => {
  const w = fakes.fixture.webdav;
  const { page, ferry } = await open(withWebdav);
  await signIn(page, { url: w.shareUrl });
  await expect
    .poll(() => names(page), { timeout: 20_000 })
    .toEqual(expect.arrayContaining(['beach day.jpg', 'notes.txt']));
  await check(page, 'notes.txt').check();
  await addUploadAndCompare(page, ferry, [want(w.files, 'notes.txt')]);
});

test("bad input shows the server's message: no URL, wrong password, then a loopback address refused", async () => {
  const w = fakes.fixture.webdav;
  const { page } = await open(withWebdav);
  await signIn(page, { url: 'not a url' });
  expect(await refusal(page)).toBe('Invalid WebDAV URL');
  // The form and its alert pass axe (labels, contrast, roles).
  expect(await axeViolations(page)).toEqual([]);
  await page.getByLabel('Username (optional)').fill(w.user);
  await page.getByLabel('App password (optional)').fill('wrong-password');
  await page.getByLabel('Server URL').fill(w.url);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect
    .poll(() => refusal(page), { timeout: 20_000 })
    .toBe('The WebDAV server refused the username or password');

  // Without --allow-local-urls, the fake's loopback address is what the egress rules refuse.
  const strict = await open(() =>
    startFerry(['--secret', SECRET, '--webdav', '--ui-dir', join(repoRoot, 'apps', 'demo', 'dist')]),
  );
  await signIn(strict.page, { url: w.url, username: w.user, password: w.password });
  expect(await refusal(strict.page)).toBe('The WebDAV URL points at an address that is not allowed');
  expect(await names(strict.page)).toEqual([]);
});

test('a server without --webdav shows no WebDAV source', async () => {
  const { page } = await open(() => startDemoFerry(fakes, []));
  await page.getByRole('button', { name: 'Google Drive', exact: true }).waitFor();
  expect(await page.getByRole('button', { name: 'WebDAV', exact: true }).count()).toBe(0);
});
