/**
 * The stack S3 specs run against: a Garage bucket, a `ferry` signing for it (and serving a test
 * page, so the page's origin is the one the bucket's CORS allows), and Chromium.
 */
import type { Page } from 'playwright-core';
import { type Browser, launchBrowser } from './browser.ts';
import { type RunningFerry, startFerry } from './ferry.ts';
import { type RunningGarage, startGarage } from './garage.ts';

export interface S3Stack {
  garage: RunningGarage;
  ferry: RunningFerry;
  browser: Browser;
  /** Opens the served page and waits for `window.ready`. */
  open(): Promise<Page>;
  /** Object key of a path-style URL of the bucket. */
  keyOf(url: string): string;
  stop(): Promise<void>;
}

export async function startS3Stack(uiDir: string, extraArgs: string[] = []): Promise<S3Stack> {
  const garage = await startGarage();
  const ferry = await startFerry([
    '--ui-dir',
    uiDir,
    '--s3-endpoint',
    garage.endpoint,
    '--s3-bucket',
    garage.bucket,
    '--s3-region',
    garage.region,
    '--s3-access-key',
    garage.accessKey,
    '--s3-secret-key',
    garage.secretKey,
    '--s3-force-path-style',
    '--s3-key-prefix',
    'uploads/',
    ...extraArgs,
  ]).catch(async (e) => {
    await garage.stop();
    throw e;
  });
  await garage.setCors([ferry.url], ['ETag']);
  const browser = await launchBrowser();
  return {
    garage,
    ferry,
    browser,
    async open() {
      const page = await browser.context.newPage();
      await page.goto(`${ferry.url}/`);
      await page.waitForFunction(() => (window as { ready?: boolean }).ready === true);
      return page;
    },
    keyOf(url: string) {
      const path = new URL(url).pathname;
      const prefix = `/${garage.bucket}/`;
      if (!path.startsWith(prefix)) throw new Error(`not a URL of the bucket: ${url}`);
      return decodeURIComponent(path.slice(prefix.length));
    },
    async stop() {
      await browser.close();
      await ferry.stop();
      await garage.stop();
    },
  };
}
