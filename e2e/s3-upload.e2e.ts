/**
 * @ferry/core's S3 uploaders in real Chromium, signed by a real `ferry`, storing into a real
 * Garage bucket: single PUT, single POST (presigned form), multipart of 30 MiB paused and resumed
 * mid-file, cancel and remove-while-paused (the multipart upload is aborted on the store), and a
 * bucket whose CORS hides ETag. Every stored object is read back and compared by sha256.
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
let page: { dir: string; remove(): Promise<void> };
let stack: S3Stack;

beforeAll(async () => {
  page = await buildCorePage();
  stack = await startS3Stack(page.dir);
});

afterAll(async () => {
  await stack?.stop();
  await page?.remove();
});

async function expectStored(key: string, size: number, seed: number): Promise<void> {
  const stored = await stack.garage.getObject(key);
  expect(stored, `object ${key}`).not.toBeNull();
  expect(stored?.length).toBe(size);
  expect(sha256Of(stored ?? new Uint8Array())).toBe(sha256Of(patternBytes(size, seed)));
}

/** Slows the page's uploads (DevTools network throttling), so there is time to act mid-file. */
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

test.each(['put', 'post'] as const)('single %s upload goes straight to the bucket', async (method) => {
  const p = await stack.open();
  const seed = method === 'put' ? 11 : 12;
  const size = 3 * MiB + 17;
  const out = await p.evaluate(
    async ({ method, size, seed }) => {
      const { Ferry, S3Uploader } = window.core;
      const engine = new Ferry({ uploader: new S3Uploader({ companionUrl: '', method }) });
      const id = engine.addFile({ data: window.patternFile(`single ${method}.bin`, size, seed), meta: { note: 'hi' } });
      const result = await engine.upload();
      const file = id ? engine.getFile(id) : undefined;
      return {
        ok: result.successful.length,
        failed: result.failed.length,
        url: file?.uploadURL ?? '',
        error: file?.error,
      };
    },
    { method, size, seed },
  );
  expect(out).toMatchObject({ ok: 1, failed: 0 });
  const key = stack.keyOf(out.url);
  expect(key).toMatch(new RegExp(`^uploads/[0-9a-f]{32}-single_${method}\\.bin$`));
  await expectStored(key, size, seed);
  await p.close();
});

test('multipart 30 MiB: pause mid-file, resume lists the stored parts and finishes', async () => {
  const p = await stack.open();
  await throttle(p, 12 * MiB);
  const listCalls: string[] = [];
  p.on('request', (r) => {
    if (r.method() === 'GET' && /\/s3\/multipart\/[^/]+\?key=/.test(r.url())) listCalls.push(r.url());
  });
  const size = 30 * MiB + 5;
  await p.evaluate(
    ({ size }) => {
      const { Ferry, S3MultipartUploader } = window.core;
      window.engine = new Ferry({ uploader: new S3MultipartUploader({ companionUrl: '', limit: 2 }) });
      window.engine.addFile({ data: window.patternFile('big.bin', size, 21) });
      void window.engine.upload();
    },
    { size },
  );
  // Pause once at least one part is stored and the file is well short of done.
  await p.waitForFunction(() => {
    const f = window.engine.getFiles()[0];
    return (f?.s3Multipart?.parts.length ?? 0) >= 1 && (f?.progress.percentage ?? 0) < 80;
  });
  const paused = await p.evaluate(() => {
    const f = window.engine.getFiles()[0];
    if (!f) throw new Error('no file');
    window.engine.pauseResume(f.id);
    const after = window.engine.getFile(f.id);
    return { state: after?.state, s3: after?.s3Multipart, bytes: after?.progress.bytesUploaded ?? 0 };
  });
  expect(paused.state).toBe('paused');
  expect(paused.bytes).toBeLessThan(size);
  const storedBefore = paused.s3?.parts.length ?? 0;
  expect(storedBefore).toBeGreaterThanOrEqual(1);
  expect(storedBefore).toBeLessThan(7);
  expect(listCalls).toEqual([]);

  const done = await p.evaluate(async () => {
    const f = window.engine.getFiles()[0];
    if (!f) throw new Error('no file');
    const finished = new Promise<void>((ok) => window.engine.on('complete', () => ok()));
    window.engine.pauseResume(f.id);
    await finished;
    const last = window.engine.getFile(f.id);
    return { state: last?.state, url: last?.uploadURL ?? '', key: last?.s3Multipart?.key ?? '' };
  });
  expect(done.state).toBe('complete');
  expect(listCalls.length).toBe(1);
  await expectStored(done.key, size, 21);
  expect(await stack.garage.listMultipartUploads()).toEqual([]);
  await p.close();
});

test('cancel aborts the multipart upload on the store', async () => {
  const p = await stack.open();
  await throttle(p, 8 * MiB);
  await p.evaluate(() => {
    const { Ferry, S3MultipartUploader } = window.core;
    window.engine = new Ferry({ uploader: new S3MultipartUploader({ companionUrl: '' }) });
    window.engine.addFile({ data: window.patternFile('cancel.bin', 30 * 1024 * 1024, 31) });
    void window.engine.upload();
  });
  const uploadId = await p
    .waitForFunction(() => window.engine.getFiles()[0]?.s3Multipart?.uploadId)
    .then((h) => h.jsonValue());
  expect(await stack.garage.listMultipartUploads()).toContain(uploadId);
  await p.evaluate(() => window.engine.cancelAll());
  await expect
    .poll(() => stack.garage.listMultipartUploads(), { timeout: 10_000, interval: 100 })
    .not.toContain(uploadId);
  await p.close();
});

test('removing a paused file aborts its multipart upload on the store', async () => {
  const p = await stack.open();
  await throttle(p, 8 * MiB);
  await p.evaluate(() => {
    const { Ferry, S3MultipartUploader } = window.core;
    window.engine = new Ferry({ uploader: new S3MultipartUploader({ companionUrl: '' }) });
    window.engine.addFile({ data: window.patternFile('removed.bin', 30 * 1024 * 1024, 32) });
    void window.engine.upload();
  });
  const uploadId = await p
    .waitForFunction(() => window.engine.getFiles()[0]?.s3Multipart?.uploadId)
    .then((h) => h.jsonValue());
  const state = await p.evaluate(() => {
    const f = window.engine.getFiles()[0];
    if (!f) throw new Error('no file');
    window.engine.pauseResume(f.id);
    return window.engine.getFile(f.id)?.state;
  });
  expect(state).toBe('paused');
  expect(await stack.garage.listMultipartUploads()).toContain(uploadId);
  await p.evaluate(() => {
    const f = window.engine.getFiles()[0];
    if (f) window.engine.removeFile(f.id);
  });
  await expect
    .poll(() => stack.garage.listMultipartUploads(), { timeout: 10_000, interval: 100 })
    .not.toContain(uploadId);
  await p.close();
});

test('a bucket whose CORS hides ETag fails with the CORS message', async () => {
  await stack.garage.setCors([stack.ferry.url], []);
  try {
    const p = await stack.open();
    const error = await p.evaluate(async () => {
      const { Ferry, S3MultipartUploader } = window.core;
      const engine = new Ferry({ uploader: new S3MultipartUploader({ companionUrl: '' }) });
      const id = engine.addFile({ data: window.patternFile('hidden.bin', 6 * 1024 * 1024, 41) });
      await engine.upload();
      return id ? engine.getFile(id)?.error : undefined;
    });
    expect(error?.message).toBe(
      'Could not read the ETag header. This likely means CORS is not configured correctly on the bucket (ETag must be exposed).',
    );
    await p.close();
  } finally {
    await stack.garage.setCors([stack.ferry.url], ['ETag']);
  }
});
