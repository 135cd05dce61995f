/**
 * A forced stall in real Chromium: a small tus server (in this spec) accepts the upload's POST,
 * then never reads the PATCH body. The engine must abort after its stall timeout and put the
 * file in error with the catalogue message. The timeout is shortened to 3 s here; the 30 s
 * default is covered by packages/core/src/stall.test.ts and ferry.test.ts with fake timers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { buildCorePage, stopFerryFirmly } from './support/core-page.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';

/** What the core test page (e2e/pages/core) puts on `window`. */
type CoreWindow = {
  core: typeof import('@ferry/core');
  patternFile(name: string, size: number, seed: number, type?: string): File;
  /** Set by specs: the engine under test. */
  engine: import('@ferry/core').Ferry;
};

let page: { dir: string; remove(): Promise<void> };
let ferry: RunningFerry;
let browser: Browser;
let stallServer: Server;
let stallUrl = '';
const seen: string[] = [];
let patchReq: IncomingMessage | undefined;
let patchClosed = false;

const cors = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, PATCH, HEAD, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': '*',
  'Access-Control-Expose-Headers': 'Location, Upload-Offset, Upload-Length, Tus-Resumable',
};

function handle(req: IncomingMessage, res: ServerResponse): void {
  seen.push(req.method ?? '');
  if (req.method === 'OPTIONS') {
    res.writeHead(204, cors).end();
  } else if (req.method === 'POST') {
    res.writeHead(201, { ...cors, 'Tus-Resumable': '1.0.0', Location: `${stallUrl}/files/stalled` }).end();
  } else if (req.method === 'PATCH') {
    // Stop reading: the body backs up in the socket buffers and the browser's progress stops.
    req.pause();
    patchReq = req;
    req.on('close', () => {
      patchClosed = true;
    });
  } else if (req.method === 'HEAD') {
    res.writeHead(200, { ...cors, 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0' }).end();
  } else {
    res.writeHead(204, cors).end();
  }
}

beforeAll(async () => {
  page = await buildCorePage();
  ferry = await startFerry(['--ui-dir', page.dir]);
  stallServer = createServer(handle);
  await new Promise<void>((ok) => stallServer.listen(0, '127.0.0.1', ok));
  stallUrl = `http://127.0.0.1:${(stallServer.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  stallServer?.closeAllConnections();
  await new Promise((ok) => stallServer?.close(ok));
  if (ferry) await stopFerryFirmly(ferry);
  await page?.remove();
});

test('an upload whose server stops reading ends in the stall message, retryable', async () => {
  const p = await browser.context.newPage();
  await p.goto(`${ferry.url}/`);
  await p.waitForFunction(() => (window as { ready?: boolean }).ready === true);
  const started = Date.now();
  const r = await p.evaluate(async (endpoint) => {
    const { Ferry, TusUploader } = (window as unknown as CoreWindow).core;
    const engine = new Ferry({ uploader: new TusUploader({ endpoint, resume: false }), stallTimeout: 3000 });
    const id =
      engine.addFile({ data: (window as unknown as CoreWindow).patternFile('stall.bin', 96 * 1024 * 1024, 1) }) ?? '';
    const errors: string[] = [];
    engine.on('upload-error', (_f, e) => errors.push(e.message));
    const result = await engine.upload();
    const f = engine.getFile(id);
    return {
      failed: result.failed.length,
      state: f?.state,
      error: f?.error,
      errors,
      sent: f?.progress.bytesUploaded ?? 0,
      info: engine.getState().info.map((i) => [i.message, i.details]),
    };
  }, `${stallUrl}/files/`);
  const elapsed = Date.now() - started;
  expect(r.failed).toBe(1);
  expect(r.state).toBe('error');
  expect(r.error).toEqual({ message: 'Upload stalled for 3 seconds, aborting.', retryable: true });
  expect(r.errors).toEqual(['Upload stalled for 3 seconds, aborting.']);
  expect(r.info).toEqual([['Upload error', 'Upload stalled for 3 seconds, aborting.']]);
  expect(r.sent).toBeLessThan(96 * 1024 * 1024);
  expect(seen).toContain('POST');
  expect(seen).toContain('PATCH');
  expect(elapsed).toBeGreaterThanOrEqual(3000);
  // The stalled request was really aborted: read what is buffered and the body ends early.
  patchReq?.resume();
  await expect.poll(() => patchClosed, { timeout: 10_000 }).toBe(true);
  expect(patchReq?.complete).toBe(false);
  await p.close();
});
