/**
 * Recovery of an S3 multipart upload (real Chromium, real `ferry` signing, real Garage): a page
 * reloaded mid-file makes a new engine with the same id, which finds the file in IndexedDB with
 * its bytes (OPFS copy) and its upload id, lists the parts the store has, sends only the others
 * and completes one object, byte-exact; the recovery storage is empty after.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildCorePage, patternBytes, sha256Of } from './support/core-page.ts';
import { type S3Stack, startS3Stack } from './support/s3-stack.ts';

declare global {
  interface Window {
    core: typeof import('@ferry/core');
    patternFile(name: string, size: number, seed: number, type?: string): File;
    engine: import('@ferry/core').Ferry;
  }
}

const MiB = 1024 * 1024;
let built: { dir: string; remove(): Promise<void> };
let stack: S3Stack;

beforeAll(async () => {
  built = await buildCorePage();
  stack = await startS3Stack(built.dir);
});
afterAll(async () => {
  await stack?.stop();
  await built?.remove();
});

async function throttle(p: Page, bytesPerSecond: number): Promise<void> {
  const cdp = await stack.browser.context.newCDPSession(p);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: bytesPerSecond,
  });
}

/** The page's engine: S3 multipart through the ferry's signing routes, with recovery on. */
function makeEngine(p: Page) {
  return p.evaluate(() => {
    const { Ferry, S3MultipartUploader } = window.core;
    window.engine = new Ferry({
      id: 's3-recovery',
      uploader: new S3MultipartUploader({ companionUrl: '', limit: 2 }),
      recovery: true,
    });
  });
}

test('multipart 30 MiB reloaded mid-file resumes from ListParts and stores one exact object', async () => {
  const size = 30 * MiB + 5;
  const p = await stack.open();
  await throttle(p, 12 * MiB);
  await makeEngine(p);
  await p.evaluate(
    ({ size }) => {
      window.engine.addFile({ data: window.patternFile('recovered.bin', size, 41) });
      void window.engine.upload();
    },
    { size },
  );
  // The copy of the bytes must be kept before the reload (under load it can lag the upload;
  // a reload before it would bring the file back as a ghost, which is another test).
  await expect
    .poll(() => p.evaluate(async () => (await window.engine.recovery?.stored())?.copies), { timeout: 30_000 })
    .toBe(1);
  // Reload once at least two parts are stored and the file is well short of done.
  await p.waitForFunction(() => {
    const f = window.engine.getFiles()[0];
    return (f?.s3Multipart?.parts.length ?? 0) >= 2 && (f?.progress.percentage ?? 0) < 75;
  });
  const before = await p.evaluate(() => window.engine.getFiles()[0]?.s3Multipart);
  const uploadId = before?.uploadId ?? '';
  expect(await stack.garage.listMultipartUploads()).toContain(uploadId);

  const listed: string[] = [];
  const sentAfter: number[] = [];
  p.on('request', (r) => {
    if (r.method() === 'GET' && /\/s3\/multipart\/[^/]+\?key=/.test(r.url())) listed.push(r.url());
    const url = new URL(r.url());
    if (r.method() === 'PUT' && url.searchParams.get('uploadId') === uploadId)
      sentAfter.push(Number(url.searchParams.get('partNumber')));
  });
  await p.reload();
  await p.waitForFunction(() => (window as { ready?: boolean }).ready === true);
  await makeEngine(p);
  await p.waitForFunction(() => window.engine.getFiles()[0]?.state === 'complete', undefined, { timeout: 60_000 });
  const done = await p.evaluate(() => {
    const f = window.engine.getFiles()[0];
    return {
      key: f?.s3Multipart?.key ?? '',
      uploadId: f?.s3Multipart?.uploadId,
      restored: window.engine.recovery?.getSnapshot().restored,
    };
  });
  expect(done.restored).toBe(1);
  // The same multipart upload continued: one ListParts, and no part the store had was sent again.
  expect(done.uploadId).toBe(uploadId);
  expect(listed).toHaveLength(1);
  for (const part of before?.parts ?? []) expect(sentAfter).not.toContain(part.PartNumber);
  expect(sentAfter.length).toBeGreaterThan(0);
  const object = await stack.garage.getObject(done.key);
  expect(object?.length).toBe(size);
  expect(sha256Of(object ?? new Uint8Array())).toBe(sha256Of(patternBytes(size, 41)));
  expect(await stack.garage.listMultipartUploads()).toEqual([]);
  expect(await p.evaluate(() => window.engine.recovery?.stored())).toEqual({ records: 0, copies: 0 });
  await p.close();
});
