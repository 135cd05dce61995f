/**
 * Compatibility: Uppy's own `@uppy/core` + `@uppy/url` + `@uppy/tus` (from npm) in real
 * Chromium import a link through `ferry`'s companion routes (`/url/meta`, `/url/get`, the
 * `/api/{token}` socket) into `ferry`'s own tus endpoint. The stored bytes are read back and
 * compared by sha256 with what the origin served.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { patternBytes, sha256Of } from './support/core-page.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: Uppy's classes are driven from page scripts
    Uppy: any;
    // biome-ignore lint/suspicious/noExplicitAny: see above
    Tus: any;
    // biome-ignore lint/suspicious/noExplicitAny: see above
    Url: any;
  }
}

const SIZE = 5 * 1024 * 1024 + 17;
const SEED = 61;
const bytes = patternBytes(SIZE, SEED);
let dir: string;
let origin: Server;
let originUrl: string;
let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-uppy-companion-'));
  await build({
    root: resolve(import.meta.dirname, 'pages', 'companion-uppy'),
    logLevel: 'error',
    configFile: false,
    build: { outDir: dir, emptyOutDir: true, minify: false },
  });
  origin = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(SIZE) });
    if (req.method === 'HEAD') res.end();
    else res.end(Buffer.from(bytes));
  });
  await new Promise<void>((ok) => origin.listen(0, '127.0.0.1', ok));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/photos/holiday%20pic.png`;
  ferry = await startFerry(['--ui-dir', dir, '--allow-local-urls']);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await new Promise((ok) => origin?.close(ok));
  await rm(dir, { recursive: true, force: true });
});

test('@uppy/url + @uppy/tus import a link through ferry, bytes exact', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${ferry.url}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  const out = await page.evaluate(
    async ({ link }) => {
      const uppy = new window.Uppy({ autoProceed: false });
      uppy.use(window.Url, { companionUrl: location.origin });
      uppy.use(window.Tus, { endpoint: `${location.origin}/files/` });
      const progress: number[] = [];
      uppy.on('upload-progress', (_f: unknown, p: { bytesUploaded: number }) => progress.push(p.bytesUploaded));
      await uppy.getPlugin('Url').addFile(link);
      const added = uppy.getFiles()[0];
      const result = await uppy.upload();
      return {
        name: added?.name as string | undefined,
        size: added?.size as number | undefined,
        remote: added?.isRemote as boolean | undefined,
        ok: result.successful?.length ?? 0,
        failed: (result.failed ?? []).map((f: { error?: unknown }) => String(f.error)),
        url: result.successful?.[0]?.uploadURL as string | undefined,
        progressed: progress.length > 0,
      };
    },
    { link: originUrl },
  );
  expect(out.failed).toEqual([]);
  expect(out).toMatchObject({ name: 'holiday pic.png', size: SIZE, remote: true, ok: 1 });
  expect(out.url).toMatch(new RegExp(`^${ferry.url}/files/`));
  const stored = new Uint8Array(await (await fetch(out.url ?? '')).arrayBuffer());
  expect(stored.length).toBe(SIZE);
  expect(sha256Of(stored)).toBe(sha256Of(bytes));
  await page.close();
}, 60_000);
