/**
 * @ferry/core in real Chromium against a real `ferry`: tus pause/resume mid-file, XHR form, raw
 * and bundle uploads, server errors with status and message, and offline/online via the
 * browser's network emulation. Every upload is checked byte for byte (sha256) on the server.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { buildCorePage, patternBytes, sha256Of, stopFerryFirmly } from './support/core-page.ts';
import { type RunningFerry, startFerry, storedTusUploads } from './support/ferry.ts';

/** What the core test page (e2e/pages/core) puts on `window`. */
type CoreWindow = {
  core: typeof import('@ferry/core');
  patternFile(name: string, size: number, seed: number, type?: string): File;
  /** Set by specs: the engine under test. */
  engine: import('@ferry/core').Ferry;
};

const MiB = 1024 * 1024;
let page: { dir: string; remove(): Promise<void> };
let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  page = await buildCorePage();
  ferry = await startFerry(['--ui-dir', page.dir]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  if (ferry) await stopFerryFirmly(ferry);
  await page?.remove();
});

async function openPage(): Promise<Page> {
  const p = await browser.context.newPage();
  await p.goto(`${ferry.url}/`);
  await p.waitForFunction(() => (window as { ready?: boolean }).ready === true);
  return p;
}

/** Slows the page's uploads (DevTools network throttling), so there is time to act mid-file. */
async function throttleUploads(p: Page, bytesPerSecond: number): Promise<void> {
  const cdp = await browser.context.newCDPSession(p);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: bytesPerSecond,
  });
}

async function fetchBytes(url: string): Promise<{ sha: string; disposition: string | null; nosniff: string | null }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return {
    sha: sha256Of(new Uint8Array(await res.arrayBuffer())),
    disposition: res.headers.get('content-disposition'),
    nosniff: res.headers.get('x-content-type-options'),
  };
}

async function tusOffset(url: string): Promise<number> {
  const res = await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
  expect(res.status).toBe(200);
  return Number(res.headers.get('upload-offset'));
}

describe('tus', () => {
  test('pause mid-file, resume from the server offset, bytes exact', async () => {
    const p = await openPage();
    await throttleUploads(p, 8 * MiB);
    const size = 24 * MiB + 123;
    const paused = await p.evaluate(async (size) => {
      const { Ferry, TusUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new TusUploader({ endpoint: '/files/', chunkSize: 2 * 1024 * 1024 }) });
      (window as unknown as CoreWindow).engine = engine;
      const id = engine.addFile({ data: (window as unknown as CoreWindow).patternFile('pause.bin', size, 7) }) ?? '';
      const reachedHalf = new Promise<void>((ok) => {
        const off = engine.on('upload-progress', (f) => {
          if (f.progress.bytesUploaded >= size / 3) {
            off();
            ok();
          }
        });
      });
      void engine.upload();
      await reachedHalf;
      engine.pauseResume(id);
      const f = engine.getFile(id);
      return {
        id,
        state: f?.state,
        isPaused: f?.isPaused,
        url: f?.tus?.uploadUrl ?? '',
        sent: f?.progress.bytesUploaded,
      };
    }, size);
    expect(paused.state).toBe('paused');
    expect(paused.isPaused).toBe(true);
    // No wait for the aborted PATCH: this HEAD takes the upload's lock, which ends the PATCH still
    // in flight on the server, and answers the offset it stored.
    const offset = await tusOffset(paused.url);
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(size);
    // Nothing moves while paused.
    await new Promise((ok) => setTimeout(ok, 1000));
    expect(await tusOffset(paused.url)).toBe(offset);

    const done = await p.evaluate(async (id) => {
      const engine = (window as unknown as CoreWindow).engine;
      const resumedFrom = new Promise<number>((ok) => {
        const off = engine.on('upload-progress', (f) => {
          off();
          ok(f.progress.bytesUploaded);
        });
      });
      const finished = new Promise<void>((ok) => engine.on('upload-success', () => ok()));
      engine.pauseResume(id);
      const first = await resumedFrom;
      await finished;
      const f = engine.getFile(id);
      return { state: f?.state, uploadURL: f?.uploadURL, first };
    }, paused.id);
    expect(done.state).toBe('complete');
    expect(done.uploadURL).toBe(paused.url);
    expect(done.first).toBeGreaterThanOrEqual(offset);
    const stored = await storedTusUploads(ferry.dataDir);
    const mine = stored.filter((u) => u.filename === 'pause.bin');
    expect(mine).toHaveLength(1);
    expect(mine[0]?.size).toBe(size);
    expect(mine[0]?.sha256).toBe(sha256Of(patternBytes(size, 7)));
    await p.close();
  });

  test('offline pauses the upload and says so; back online it resumes and completes', async () => {
    const p = await openPage();
    await throttleUploads(p, 4 * MiB);
    const size = 16 * MiB + 5;
    const id = await p.evaluate(async (size) => {
      const { Ferry, TusUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new TusUploader({ endpoint: '/files/', chunkSize: 1024 * 1024 }) });
      (window as unknown as CoreWindow).engine = engine;
      const id = engine.addFile({ data: (window as unknown as CoreWindow).patternFile('offline.bin', size, 11) }) ?? '';
      const started = new Promise<void>((ok) => {
        const off = engine.on('upload-progress', (f) => {
          if (f.progress.bytesUploaded > 0) {
            off();
            ok();
          }
        });
      });
      void engine.upload();
      await started;
      return id;
    }, size);
    await browser.context.setOffline(true);
    await p.waitForFunction((id) => (window as unknown as CoreWindow).engine.getFile(id)?.state === 'paused', id, {
      timeout: 10_000,
    });
    const offline = await p.evaluate(() => ({
      isOffline: (window as unknown as CoreWindow).engine.getState().isOffline,
      info: (window as unknown as CoreWindow).engine.getState().info.map((i) => [i.type, i.message]),
    }));
    expect(offline.isOffline).toBe(true);
    expect(offline.info).toContainEqual(['error', 'No Internet connection']);

    await browser.context.setOffline(false);
    await p.waitForFunction((id) => (window as unknown as CoreWindow).engine.getFile(id)?.state === 'complete', id, {
      timeout: 60_000,
    });
    const online = await p.evaluate(() => ({
      isOffline: (window as unknown as CoreWindow).engine.getState().isOffline,
      info: (window as unknown as CoreWindow).engine.getState().info.map((i) => i.message),
    }));
    expect(online.isOffline).toBe(false);
    expect(online.info).not.toContain('No Internet connection');
    const mine = (await storedTusUploads(ferry.dataDir)).filter((u) => u.filename === 'offline.bin');
    expect(mine).toHaveLength(1);
    expect(mine[0]?.sha256).toBe(sha256Of(patternBytes(size, 11)));
    await p.close();
  });
});

describe('tus bookkeeping', () => {
  test('removing a file mid-upload terminates it on the server', async () => {
    const p = await openPage();
    const deletes: { url: string; status: Promise<number> }[] = [];
    p.on('request', (req) => {
      if (req.method() === 'DELETE') {
        deletes.push({ url: req.url(), status: req.response().then((r) => r?.status() ?? 0) });
      }
    });
    // No throttling here: a throttled, aborted request can linger in Chromium and hold the
    // upload's lock; many small chunks leave time to remove the file mid-upload instead.
    const url = await p.evaluate(async () => {
      const { Ferry, TusUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new TusUploader({ endpoint: '/files/', chunkSize: 1024 * 1024 }) });
      const id =
        engine.addFile({ data: (window as unknown as CoreWindow).patternFile('removed.bin', 128 * 1024 * 1024, 2) }) ??
        '';
      const started = new Promise<void>((ok) => {
        const off = engine.on('upload-progress', (f) => {
          if (f.progress.bytesUploaded > 0) {
            off();
            ok();
          }
        });
      });
      const done = engine.upload();
      await started;
      const url = engine.getFile(id)?.tus?.uploadUrl ?? '';
      engine.removeFile(id);
      await done;
      return url;
    });
    expect(url).toMatch(/\/files\//);
    const status = async () => {
      try {
        const res = await fetch(url, {
          method: 'HEAD',
          headers: { 'Tus-Resumable': '1.0.0' },
          signal: AbortSignal.timeout(2000),
        });
        return res.status;
      } catch {
        return 0;
      }
    };
    // The engine sent the tus termination for this upload...
    expect(deletes.map((d) => d.url)).toEqual([url]);
    expect(await deletes[0]?.status).toBe(204);
    // ...and the server no longer knows it.
    await expect.poll(status, { timeout: 15_000, interval: 1000 }).toBe(404);
    await p.close();
  });

  test('a new page resumes the earlier upload of the same file', async () => {
    const size = 12 * MiB + 9;
    const first = await openPage();
    await throttleUploads(first, 4 * MiB);
    const url = await first.evaluate(async (size) => {
      const { Ferry, TusUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new TusUploader({ endpoint: '/files/', chunkSize: 1024 * 1024 }) });
      const id = engine.addFile({ data: (window as unknown as CoreWindow).patternFile('again.bin', size, 13) }) ?? '';
      const some = new Promise<void>((ok) => {
        const off = engine.on('upload-progress', (f) => {
          if (f.progress.bytesUploaded >= 2 * 1024 * 1024) {
            off();
            ok();
          }
        });
      });
      void engine.upload();
      await some;
      engine.pauseResume(id);
      return engine.getFile(id)?.tus?.uploadUrl ?? '';
    }, size);
    await first.close();
    // The HEAD takes the upload's lock, ending any PATCH still in flight, then answers its offset.
    const offset = await tusOffset(url);
    expect(offset).toBeGreaterThan(0);

    const second = await openPage();
    const r = await second.evaluate(async (size) => {
      const { Ferry, TusUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new TusUploader({ endpoint: '/files/' }) });
      const id = engine.addFile({ data: (window as unknown as CoreWindow).patternFile('again.bin', size, 13) }) ?? '';
      let firstProgress = -1;
      engine.on('upload-progress', (f) => {
        if (firstProgress < 0) firstProgress = f.progress.bytesUploaded;
      });
      await engine.upload();
      const f = engine.getFile(id);
      return { state: f?.state, uploadURL: f?.uploadURL, firstProgress };
    }, size);
    expect(r.state).toBe('complete');
    expect(r.uploadURL).toBe(url);
    expect(r.firstProgress).toBeGreaterThanOrEqual(offset);
    const mine = (await storedTusUploads(ferry.dataDir)).filter((u) => u.filename === 'again.bin');
    expect(mine).toHaveLength(1);
    expect(mine[0]?.sha256).toBe(sha256Of(patternBytes(size, 13)));
    await second.close();
  });
});

describe('xhr', () => {
  test('multipart form upload to /upload, bytes exact, real progress', async () => {
    const p = await openPage();
    const size = 5 * MiB + 17;
    const r = await p.evaluate(async (size) => {
      const { Ferry, XhrUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new XhrUploader({ endpoint: '/upload' }), meta: { album: 'x' } });
      const id = engine.addFile({ data: (window as unknown as CoreWindow).patternFile('form é.bin', size, 3) }) ?? '';
      let progressEvents = 0;
      engine.on('upload-progress', () => {
        progressEvents += 1;
      });
      const result = await engine.upload();
      const f = engine.getFile(id);
      return {
        ok: result.successful.length,
        uploadURL: f?.uploadURL ?? '',
        body: f?.response?.body,
        progressEvents,
      };
    }, size);
    expect(r.ok).toBe(1);
    expect(r.uploadURL).toMatch(new RegExp(`^${ferry.url}/upload/[0-9a-f]{32}$`));
    expect(r.body).toMatchObject({ name: 'form é.bin', files: [{ name: 'form é.bin', size }] });
    expect(r.progressEvents).toBeGreaterThan(0);
    const got = await fetchBytes(r.uploadURL);
    expect(got.sha).toBe(sha256Of(patternBytes(size, 3)));
    expect(got.nosniff).toBe('nosniff');
    expect(got.disposition).toMatch(/^attachment;/);
    await p.close();
  });

  test('raw body upload with PUT, bytes exact', async () => {
    const p = await openPage();
    const size = 2 * MiB + 1;
    const r = await p.evaluate(async (size) => {
      const { Ferry, XhrUploader } = (window as unknown as CoreWindow).core;
      const uploader = new XhrUploader({
        endpoint: (f) => `/upload/raw?name=${encodeURIComponent(f.name)}`,
        method: 'PUT',
        formData: false,
      });
      const engine = new Ferry({ uploader });
      const id =
        engine.addFile({
          data: (window as unknown as CoreWindow).patternFile('raw.pdf', size, 5, 'application/pdf'),
        }) ?? '';
      await engine.upload();
      const f = engine.getFile(id);
      return { state: f?.state, uploadURL: f?.uploadURL ?? '', body: f?.response?.body };
    }, size);
    expect(r.state).toBe('complete');
    expect(r.body).toMatchObject({ name: 'raw.pdf', files: [{ type: 'application/pdf', size }] });
    expect((await fetchBytes(r.uploadURL)).sha).toBe(sha256Of(patternBytes(size, 5)));
    await p.close();
  });

  test('bundle: three files in one request, each bytes exact; remote files refused', async () => {
    const p = await openPage();
    const sizes = [MiB + 1, 10, 3 * MiB];
    let posts = 0;
    p.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/upload') posts += 1;
    });
    const r = await p.evaluate(async (sizes) => {
      const { Ferry, XhrUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new XhrUploader({ endpoint: '/upload', bundle: true }) });
      const ids = engine.addFiles(
        sizes.map((size, i) => ({ data: (window as unknown as CoreWindow).patternFile(`b${i}.bin`, size, 20 + i) })),
      );
      const result = await engine.upload();
      const urls = ids.map((id) => engine.getFile(id)?.uploadURL ?? '');

      const withRemote = new Ferry({ uploader: new XhrUploader({ endpoint: '/upload', bundle: true }) });
      withRemote.addFiles([
        { data: (window as unknown as CoreWindow).patternFile('local.bin', 10, 1) },
        { name: 'cloud.bin', isRemote: true, remote: { body: { fileId: '1' } } },
      ]);
      const refused = await withRemote.upload();
      let formOff = '';
      try {
        new XhrUploader({ endpoint: '/upload', bundle: true, formData: false });
      } catch (e) {
        formOff = (e as Error).message;
      }
      return {
        ok: result.successful.length,
        urls,
        refused: refused.failed.map((f) => f.error),
        formOff,
      };
    }, sizes);
    expect(r.ok).toBe(3);
    expect(posts).toBe(1);
    expect(new Set(r.urls).size).toBe(3);
    for (const [i, size] of sizes.entries()) {
      expect((await fetchBytes(r.urls[i] ?? '')).sha).toBe(sha256Of(patternBytes(size, 20 + i)));
    }
    expect(r.refused).toEqual([
      { message: 'Can’t upload remote files when the `bundle: true` option is set', retryable: false },
      { message: 'Can’t upload remote files when the `bundle: true` option is set', retryable: false },
    ]);
    expect(r.formOff).toBe('`bundle: true` requires `formData: true`');
    await p.close();
  });
});

test('a server refusal keeps its status and message and is not retried', async () => {
  const small = await startFerry(['--ui-dir', page.dir, '--max-size', '1000']);
  try {
    const p = await browser.context.newPage();
    await p.goto(`${small.url}/`);
    await p.waitForFunction(() => (window as { ready?: boolean }).ready === true);
    let posts = 0;
    p.on('request', (req) => {
      if (req.method() === 'POST') posts += 1;
    });
    const r = await p.evaluate(async () => {
      const { Ferry, XhrUploader } = (window as unknown as CoreWindow).core;
      const engine = new Ferry({ uploader: new XhrUploader({ endpoint: '/upload' }) });
      const id = engine.addFile({ data: (window as unknown as CoreWindow).patternFile('big.bin', 5000, 1) }) ?? '';
      await engine.upload();
      return { error: engine.getFile(id)?.error, info: engine.getState().info.map((i) => [i.message, i.details]) };
    });
    expect(r.error).toEqual({ message: 'File exceeds the maximum size of 1000 bytes', status: 413, retryable: false });
    expect(r.info).toEqual([['Upload error', 'File exceeds the maximum size of 1000 bytes']]);
    expect(posts).toBe(1);
    await p.close();
  } finally {
    await stopFerryFirmly(small);
  }
});
