/**
 * `@ferry/core`'s companion client in real Chromium against the real `ferry`: `urlMeta` names a
 * link, a remote file uploads through `RemoteUploader` (`/url/get` + the progress socket) to
 * ferry's own tus endpoint and to its form endpoint; pause and resume go over the socket. The
 * stored bytes are read back and compared by sha256.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { buildCorePage, patternBytes, sha256Of } from './support/core-page.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

declare global {
  interface Window {
    core: typeof import('@ferry/core');
  }
}

const SIZE = 3 * 1024 * 1024 + 5;
const bytes = patternBytes(SIZE, 71);
let page: { dir: string; remove(): Promise<void> };
let origin: Server;
let originUrl: string;
let ferry: RunningFerry;
let browser: Browser;

beforeAll(async () => {
  page = await buildCorePage();
  origin = createServer((req, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = range ? Number(range[1]) : 0;
    const headers: Record<string, string> = {
      'content-type': 'application/pdf',
      'content-length': String(SIZE - from),
      'accept-ranges': 'bytes',
    };
    if (range) headers['content-range'] = `bytes ${from}-${SIZE - 1}/${SIZE}`;
    res.writeHead(range ? 206 : 200, headers);
    if (req.method === 'HEAD') return res.end();
    // Slow enough (about 2 s) that a pause lands mid-transfer.
    let pos = from;
    const tick = setInterval(() => {
      const end = Math.min(pos + 32 * 1024, SIZE);
      res.write(Buffer.from(bytes.subarray(pos, end)));
      pos = end;
      if (pos >= SIZE) {
        clearInterval(tick);
        res.end();
      }
    }, 20);
    res.on('close', () => clearInterval(tick));
  });
  await new Promise<void>((ok) => origin.listen(0, '127.0.0.1', ok));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/docs/report.pdf`;
  ferry = await startFerry(['--ui-dir', page.dir, '--allow-local-urls']);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ferry?.stop();
  await new Promise((ok) => origin?.close(ok));
  await page?.remove();
});

async function openPage(): Promise<Page> {
  const p = await browser.context.newPage();
  await p.goto(`${ferry.url}/`);
  await p.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  return p;
}

async function storedSha(url: string): Promise<string> {
  const abs = new URL(url, ferry.url).href;
  return sha256Of(new Uint8Array(await (await fetch(abs)).arrayBuffer()));
}

test.each([
  { protocol: 'tus' as const, endpoint: '/files/', pause: false },
  { protocol: 'tus' as const, endpoint: '/files/', pause: true },
  { protocol: 'multipart' as const, endpoint: '/upload', pause: true },
])(
  'RemoteUploader $protocol (pause: $pause) imports a link byte-exact',
  async ({ protocol, endpoint, pause }) => {
    const p = await openPage();
    const out = await p.evaluate(
      async ({ link, protocol, endpoint, pause }) => {
        const { Ferry, RemoteUploader, urlMeta } = window.core;
        const meta = await urlMeta(location.origin, link);
        const ferry = new Ferry({
          companionUrl: location.origin,
          remoteUploader: new RemoteUploader({ protocol, endpoint }),
        });
        const id = ferry.addFile({
          name: meta.name,
          type: meta.type,
          size: meta.size,
          isRemote: true,
          remote: { url: link, body: { url: link } },
        });
        let paused = false;
        if (pause) {
          ferry.on('upload-progress', (file: { id: string }, progress: { bytesUploaded: number }) => {
            if (!paused && progress.bytesUploaded > 256 * 1024) {
              paused = true;
              ferry.pauseResume(file.id);
              setTimeout(() => ferry.pauseResume(file.id), 300);
            }
          });
        }
        const result = await ferry.upload();
        const file = id === null ? undefined : ferry.getFile(id);
        return {
          meta,
          paused,
          ok: result.successful.length,
          failed: result.failed.map((f) => f.error?.message),
          url: file?.uploadURL as string | undefined,
        };
      },
      { link: originUrl, protocol, endpoint, pause },
    );
    expect(out.meta).toEqual({ name: 'report.pdf', type: 'application/pdf', size: SIZE });
    expect(out.failed).toEqual([]);
    expect(out.ok).toBe(1);
    expect(out.paused).toBe(pause);
    expect(await storedSha(out.url ?? '')).toBe(sha256Of(bytes));
    await p.close();
  },
  60_000,
);
