/**
 * The Dashboard as a modal: opened by its trigger, focus trapped inside and returned, closed by
 * Back (its history entry), Escape, the close button and a click outside — and when closed other
 * than by Back, the history entry it added is gone again.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { screenshot } from './support/dashboard.ts';
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

test('750 x 550 by default, and full screen on a phone', async () => {
  await open();
  await page.waitForFunction(() => document.getAnimations().length === 0);
  await screenshot(page, 'modal');
  const box = await dialog().boundingBox();
  expect([box?.width, box?.height].map((v) => Math.round(v ?? 0))).toEqual([750, 550]);
  await page.keyboard.press('Escape');

  await page.setViewportSize({ width: 375, height: 667 });
  await open();
  // Polled: the dialog slides in for 250 ms.
  await expect
    .poll(async () => {
      const phone = await dialog().boundingBox();
      return [phone?.x, phone?.y, phone?.width, phone?.height].map((v) => Math.round(v ?? -1));
    })
    .toEqual([0, 0, 375, 667]);
  const close = await page.getByRole('button', { name: 'Close Modal' }).boundingBox();
  expect(close && close.x >= 0 && close.y >= 0 && close.x + close.width <= 375).toBe(true);
  await page.getByRole('button', { name: 'Close Modal' }).click();
  await expect.poll(() => dialog().count()).toBe(0);
});

test('panels slide in over 250 ms, and not at all with reduced motion', async () => {
  await page.setViewportSize({ width: 1000, height: 800 });
  const panelAnimation = async () => {
    await page.getByRole('button', { name: 'Link' }).click();
    const duration = await page.locator('.ferry-panel').evaluate((el) => getComputedStyle(el).animationDuration);
    await page.getByRole('button', { name: 'Back' }).click();
    // Focus goes back to the control that opened the panel.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Link');
    return duration;
  };
  await open();
  expect(await panelAnimation()).toBe('0.25s');
  await page.keyboard.press('Escape');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await open();
  expect(await panelAnimation()).toBe('0s');
  await page.keyboard.press('Escape');
  await expect.poll(() => dialog().count()).toBe(0);
  await page.emulateMedia({ reducedMotion: 'no-preference' });
});
