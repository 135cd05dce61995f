/**
 * The Dashboard as a modal: opened by its trigger, focus trapped inside and returned, closed by
 * Back (its history entry), Escape, the close button and a click outside — and when closed other
 * than by Back, the history entry it added is gone again.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

let ferry: RunningFerry;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ferry = await startFerry();
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`${ferry.url}/?modal`);
});
afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
});

const dialog = () => page.getByRole('dialog');
const trigger = () => page.getByRole('button', { name: 'Upload files' });
const history = () =>
  page.evaluate(() => ({
    length: window.history.length,
    modal: (window.history.state as { ferryModal?: string } | null)?.ferryModal ?? null,
  }));
const focusInDialog = () => page.evaluate(() => !!document.activeElement?.closest('[role=dialog]'));
const focusOnTrigger = () => page.evaluate(() => document.activeElement?.textContent === 'Upload files');

async function open() {
  await trigger().focus();
  await page.keyboard.press('Enter');
  await expect.poll(() => dialog().count()).toBe(1);
}

test('Back closes the modal and focus returns to the trigger', async () => {
  const start = await history();
  await open();
  expect(await focusInDialog()).toBe(true);
  const opened = await history();
  expect(opened.length).toBe(start.length + 1);
  expect(opened.modal).not.toBeNull();

  await page.goBack();
  await expect.poll(() => dialog().count()).toBe(0);
  expect(await focusOnTrigger()).toBe(true);
  expect((await history()).modal).toBeNull();
  // Still on the page, not navigated away.
  expect(page.url()).toBe(`${ferry.url}/?modal`);
});

test('Tab and Shift+Tab stay inside the open modal', async () => {
  await open();
  for (let i = 0; i < 15; i += 1) {
    await page.keyboard.press('Tab');
    expect(await focusInDialog()).toBe(true);
  }
  for (let i = 0; i < 15; i += 1) {
    await page.keyboard.press('Shift+Tab');
    expect(await focusInDialog()).toBe(true);
  }
  await page.keyboard.press('Escape');
  await expect.poll(() => dialog().count()).toBe(0);
});

test('Escape, the close button and a click outside close it and leave history clean', async () => {
  const closers: [string, () => Promise<void>][] = [
    ['Escape', () => page.keyboard.press('Escape')],
    ['close button', () => page.getByRole('button', { name: 'Close Modal' }).click()],
    ['click outside', () => page.mouse.click(5, 5)],
  ];
  const lengths: number[] = [];
  for (const [how, close] of closers) {
    await open();
    await close();
    await expect.poll(() => dialog().count(), { message: how }).toBe(0);
    expect(await focusOnTrigger(), how).toBe(true);
    // The entry the modal pushed was popped again: Back would now leave the page, not reopen anything.
    await expect.poll(async () => (await history()).modal, { message: how }).toBeNull();
    lengths.push((await history()).length);
  }
  // Opening and closing again and again does not pile up entries: each open reuses the slot the
  // last close gave back.
  expect(new Set(lengths).size).toBe(1);
  expect(page.url()).toBe(`${ferry.url}/?modal`);
});
