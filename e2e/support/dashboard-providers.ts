/**
 * What the specs driving Ferry's own Dashboard through a cloud source share (`dashboard-*.e2e.ts`
 * for Zoom, Facebook, WebDAV and the Google pickers): `ferry` against the fakes serving the built
 * demo page, the provider panel's names and checkboxes, the popup sign-in, and adding, uploading
 * and comparing the stored bytes by sha256 with what the fake serves.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { statusText, storedWithMeta } from './dashboard.ts';
import { type FixtureFile, type RunningFakes, startFerryWithProviders } from './fakes.ts';
import { type RunningFerry, repoRoot } from './ferry.ts';

/** `ferry` with the fakes' providers plus `extra`, serving the built demo page (`npm run build`). */
export function startDemoFerry(fakes: RunningFakes, extra: string[]): Promise<RunningFerry> {
  return startFerryWithProviders(fakes, [...extra, '--ui-dir', join(repoRoot, 'apps', 'demo', 'dist')]);
}

/** The names the open provider panel lists. */
export const names = (page: Page) => page.locator('.ferry-provider-name').allTextContents();

/** The checkbox of the listed item `name`. */
export const check = (page: Page, name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true });

/** Opens the folder `name` of the listing. */
export const openFolder = (page: Page, name: string) =>
  page.getByRole('button', { name: `Open folder ${name}` }).click();

/** The fixture file `name` of `list`. */
export function want(list: FixtureFile[], name: string): FixtureFile {
  const f = list.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture file ${name}`);
  return f;
}

/** Opens the provider's panel and signs in through the popup; `consent` acts on the provider's page. */
export async function signIn(page: Page, label: string, consent: (popup: Page) => Promise<void> = async () => {}) {
  await page.getByRole('button', { name: label, exact: true }).click();
  await expect.poll(() => page.getByText('Authorization required').count()).toBe(1);
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: `Connect to ${label}` }).click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await consent(popup);
  // The widget closes the popup once it has the token; it may be gone before the close is awaited.
  if (!popup.isClosed()) await closed;
  await expect.poll(() => page.getByRole('button', { name: 'Log out' }).count()).toBe(1);
}

/** Uploads the Dashboard's files and checks every stored file's name and sha256 against `expected`. */
export async function uploadAndCompare(
  page: Page,
  ferry: RunningFerry,
  expected: Pick<FixtureFile, 'name' | 'sha256'>[],
) {
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(expected.length);
  const upload = expected.length === 1 ? 'Upload 1 file' : `Upload ${expected.length} files`;
  await page.getByRole('button', { name: upload }).click();
  await expect.poll(() => statusText(page), { timeout: 60_000 }).toBe('Complete');
  const stored = await storedWithMeta(ferry.dataDir);
  const byName = (a: { name?: string }, b: { name?: string }) => String(a.name).localeCompare(String(b.name));
  expect(stored.map((s) => ({ name: s.name, sha256: s.sha256 })).sort(byName)).toEqual(
    expected.map((f) => ({ name: f.name, sha256: f.sha256 })).sort(byName),
  );
}

/** Adds the provider panel's selection, then uploads and compares as {@link uploadAndCompare}. */
export async function addUploadAndCompare(
  page: Page,
  ferry: RunningFerry,
  expected: Pick<FixtureFile, 'name' | 'sha256'>[],
) {
  const add = page.getByRole('button', { name: expected.length === 1 ? 'Add 1 file' : `Add ${expected.length} files` });
  await expect.poll(() => add.count()).toBe(1);
  await add.click();
  await uploadAndCompare(page, ferry, expected);
}
