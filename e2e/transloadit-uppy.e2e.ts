/**
 * Uppy's released `@uppy/transloadit` (6.0.0, beside `@uppy/core` 6) against `ferry serve
 * --assembly-key/--assembly-secret` in Chromium, changed only in its `service`: the page gets
 * signed params from the application's signing endpoint (a small server here), the plugin creates
 * the Assembly, sends an image and a video through ferry's tus endpoint into it, listens to the
 * update stream, and with `waitForEncoding` reports each `/image/resize`, `/video/thumbs` and
 * `/video/encode` result (`transloadit:result`), execution progress (asked for with
 * `emit_execution_progress`) and the final status (`transloadit:complete`). The outputs are
 * fetched and checked: upload bytes by sha256, image and video sizes.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { type RunningFerry, sha256, startFerry } from './support/ferry.ts';

const KEY = 'uppy-key';
const SECRET = 'uppy-secret';
let ferry: RunningFerry;
let browser: Browser;
let signer: Server;
let signerUrl: string;
let site: string;
let fixtures: string;

const steps = {
  ':original': { robot: '/upload/handle' },
  small: { robot: '/image/resize', use: ':original', width: 100, height: 100, format: 'png', result: true },
  thumbs: { robot: '/video/thumbs', use: ':original', count: 2, width: 160, height: 120, format: 'png', result: true },
  web: { robot: '/video/encode', use: ':original', preset: 'web/mp4/240p', width: 160, height: 120, result: true },
};

/** The application's signing endpoint: params with an expiry, HMAC-SHA384 with the secret. */
async function startSigner(origin: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.setHeader('access-control-allow-origin', origin);
    if (req.method !== 'POST') {
      res.writeHead(req.method === 'OPTIONS' ? 204 : 405).end();
      return;
    }
    const params = JSON.stringify({
      auth: { key: KEY, expires: new Date(Date.now() + 10 * 60_000).toISOString() },
      emit_execution_progress: true,
      steps,
    });
    const signature = `sha384:${createHmac('sha384', SECRET).update(params).digest('hex')}`;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ params, signature }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, url: `http://127.0.0.1:${address.port}/sign` };
}

beforeAll(async () => {
  site = await mkdtemp(join(tmpdir(), 'ferry-transloadit-page-'));
  fixtures = await mkdtemp(join(tmpdir(), 'ferry-transloadit-files-'));
  await build({
    root: resolve(import.meta.dirname, 'pages', 'transloadit-uppy'),
    logLevel: 'error',
    configFile: false,
    build: { outDir: site, emptyOutDir: true, minify: false },
  });
  // A 2 s 320x240 clip from ffmpeg's test source (ffmpeg is what /video/thumbs runs too).
  await promisify(execFile)('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=duration=2:size=320x240:rate=10',
    '-pix_fmt',
    'yuv420p',
    join(fixtures, 'clip.mp4'),
  ]);
  ferry = await startFerry(['--ui-dir', site, '--assembly-key', KEY, '--assembly-secret', SECRET]);
  ({ server: signer, url: signerUrl } = await startSigner(ferry.url));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => (signer ? signer.close(ok) : ok(undefined)));
  await ferry?.stop();
  for (const dir of [site, fixtures]) if (dir) await rm(dir, { recursive: true, force: true });
});

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect(Array.from(bytes.subarray(1, 4), (b) => String.fromCharCode(b)).join('')).toBe('PNG');
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

async function fetchBytes(url: string): Promise<Uint8Array> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

interface Seen {
  results: { step: string; result: Record<string, unknown> }[];
  uploads: Record<string, unknown>[];
  complete: Record<string, unknown>[];
  errors: string[];
  progress: number[];
  encoding: { name: string; mode: string; value?: number }[];
  uploadResult: { successful: string[]; failed: string[]; transloadit: Record<string, unknown>[] };
}

test('an image and a video go through a signed Assembly; the plugin reports every result from the update stream', async () => {
  const page = await browser.context.newPage();
  const streams: { url: string; status: number; type: string | null }[] = [];
  page.on('response', (res) => {
    if (res.url().includes('/stream'))
      streams.push({ url: res.url(), status: res.status(), type: res.headers()['content-type'] ?? null });
  });
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  // A real 400x300 JPEG, drawn by the browser.
  const jpeg = await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(400, 300);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d context');
    ctx.fillStyle = '#3a3';
    ctx.fillRect(0, 0, 400, 300);
    const blob = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.9 });
    return Array.from(new Uint8Array(await blob.arrayBuffer()));
  });
  const clip = new Uint8Array(await readFile(join(fixtures, 'clip.mp4')));

  const seen = await page.evaluate(
    async ({ service, signerUrl, jpeg, clip }): Promise<Seen> => {
      // biome-ignore lint/suspicious/noExplicitAny: Uppy's classes are driven from page scripts
      const w = window as unknown as Record<string, any>;
      const uppy = new w.Uppy({ autoProceed: false });
      uppy.use(w.Transloadit, {
        service,
        waitForEncoding: true,
        errorReporting: false,
        assemblyOptions: async () => {
          const res = await fetch(signerUrl, { method: 'POST' });
          return res.json();
        },
      });
      const seen: Seen = {
        results: [],
        uploads: [],
        complete: [],
        errors: [],
        progress: [],
        encoding: [],
        uploadResult: { successful: [], failed: [], transloadit: [] },
      };
      uppy.on('transloadit:result', (step: string, result: Record<string, unknown>) =>
        seen.results.push({ step, result }),
      );
      uppy.on('transloadit:upload', (file: Record<string, unknown>) => seen.uploads.push(file));
      uppy.on('transloadit:complete', (status: Record<string, unknown>) => seen.complete.push(status));
      uppy.on('transloadit:assembly-error', (_s: unknown, e: Error) => seen.errors.push(String(e?.message)));
      uppy.on('upload-error', (_f: unknown, e: Error) => seen.errors.push(String(e?.message)));
      uppy.on('transloadit:execution-progress', (d: { progress_combined?: number }) =>
        seen.progress.push(Number(d.progress_combined)),
      );
      uppy.on('postprocess-progress', (f: { name: string }, p: { mode: string; value?: number }) =>
        seen.encoding.push({ name: f.name, mode: p.mode, value: p.value }),
      );
      uppy.addFile({
        name: 'photo.jpg',
        type: 'image/jpeg',
        data: new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }),
      });
      uppy.addFile({
        name: 'clip.mp4',
        type: 'video/mp4',
        data: new Blob([new Uint8Array(clip)], { type: 'video/mp4' }),
      });
      const result = await uppy.upload();
      seen.uploadResult = {
        successful: (result?.successful ?? []).map((f: { name: string }) => f.name),
        failed: (result?.failed ?? []).map((f: { name: string }) => f.name),
        transloadit: result?.transloadit ?? [],
      };
      return seen;
    },
    { service: ferry.url, signerUrl, jpeg, clip: Array.from(clip) },
  );

  expect(seen.errors).toEqual([]);
  expect(seen.uploadResult.failed).toEqual([]);
  expect(seen.uploadResult.successful.sort()).toEqual(['clip.mp4', 'photo.jpg']);
  // Both uploads were matched to Uppy's files (by their tus upload URL) and reported.
  expect(seen.uploads.map((u) => u.name).sort()).toEqual(['clip.mp4', 'photo.jpg']);

  // The results as the plugin reported them: one resized image, two thumbnails of the video.
  const small = seen.results.filter((r) => r.step === 'small');
  const thumbs = seen.results.filter((r) => r.step === 'thumbs');
  const web = seen.results.filter((r) => r.step === 'web');
  expect(small).toHaveLength(1);
  expect(thumbs).toHaveLength(2);
  expect(web).toHaveLength(1);
  const [final] = seen.complete;
  expect(seen.complete).toHaveLength(1);
  expect(final?.ok).toBe('ASSEMBLY_COMPLETED');
  expect(seen.uploadResult.transloadit[0]?.assembly_id).toBe(final?.assembly_id);

  // Execution progress (asked for with emit_execution_progress) rose to 100, and the plugin made
  // each file's "Encoding" bar determinate with it.
  expect(seen.progress.at(-1)).toBe(100);
  expect(seen.progress.every((p, i) => p >= 0 && p <= 100 && (i === 0 || p >= (seen.progress[i - 1] ?? 0)))).toBe(true);
  for (const name of ['photo.jpg', 'clip.mp4']) {
    expect(seen.encoding.filter((e) => e.name === name && e.mode === 'determinate').at(-1)?.value).toBe(1);
  }
  // The update stream was open (so Uppy stopped polling) and carried the uploads and results.
  expect(streams.some((s) => s.status === 200 && s.type === 'text/event-stream')).toBe(true);
  const heard = await page.evaluate(() => (window as unknown as { heard: { type: string; data: string }[] }).heard);
  const kinds = heard.map((h) => (h.type === 'message' ? h.data : h.type));
  expect(kinds.filter((k) => k === 'assembly_upload_finished')).toHaveLength(2);
  expect(kinds.filter((k) => k === 'assembly_result_finished')).toHaveLength(4);
  expect(kinds.at(-1)).toBe('assembly_finished');

  // Uploads are the bytes that were sent.
  const uploads = (final?.uploads ?? []) as { name: string; ssl_url: string; id: string }[];
  const photo = uploads.find((u) => u.name === 'photo.jpg');
  const video = uploads.find((u) => u.name === 'clip.mp4');
  expect(sha256(await fetchBytes(String(photo?.ssl_url)))).toBe(sha256(new Uint8Array(jpeg)));
  expect(sha256(await fetchBytes(String(video?.ssl_url)))).toBe(sha256(clip));

  // The resized image: 400x300 fit into 100x100 is 100x75, made from the photo.
  const img = small[0]?.result as { ssl_url: string; original_id: string; mime: string };
  expect(img.original_id).toBe(photo?.id);
  expect(img.mime).toBe('image/png');
  expect(pngSize(await fetchBytes(img.ssl_url))).toEqual({ width: 100, height: 75 });
  // The thumbnails: 320x240 frames at width 160 are 160x120 PNGs, made from the clip.
  for (const t of thumbs) {
    const r = t.result as { ssl_url: string; original_id: string };
    expect(r.original_id).toBe(video?.id);
    expect(pngSize(await fetchBytes(r.ssl_url))).toEqual({ width: 160, height: 120 });
  }
  // The encode: an MP4 of the clip at 160x120, its bytes as large as the status says.
  const mp4 = web[0]?.result as { ssl_url: string; original_id: string; mime: string; size: number; meta: object };
  expect(mp4.original_id).toBe(video?.id);
  expect(mp4.mime).toBe('video/mp4');
  expect(mp4.meta).toMatchObject({ width: 160, height: 120 });
  const encoded = await fetchBytes(mp4.ssl_url);
  expect(encoded.length).toBe(mp4.size);
  expect(new TextDecoder().decode(encoded.subarray(4, 8))).toBe('ftyp');
  // What the plugin reported is what the final status lists.
  const listed = (final?.results ?? {}) as Record<string, { id: string }[]>;
  expect(seen.results.map((r) => r.result.id).sort()).toEqual(
    [...(listed.small ?? []), ...(listed.thumbs ?? []), ...(listed.web ?? [])].map((r) => r.id).sort(),
  );
});
