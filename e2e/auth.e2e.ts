/**
 * `ferry serve --auth-secret` end to end in Chromium: @ferry/core sends the application's token
 * from one `headers` option (a function, called before every request) on tus, the link import and
 * its progress socket; without a token the file shows the server's message; released `@uppy/tus`
 * uploads with an `Authorization` header. Every stored upload is checked by sha256.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { buildCorePage, patternBytes, sha256Of, stopFerryFirmly } from './support/core-page.ts';
import { type RunningFerry, startFerry, storedTusUploads } from './support/ferry.ts';

const SECRET = 'e2e-application-secret';
const LINK_SIZE = 700 * 1024;
const linkBytes = patternBytes(LINK_SIZE, 17);

/** What the application does with its JWT library: an HS256 JWT of `claims`. */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
}

function token(sub: string): string {
  return jwt({ sub, exp: Math.floor(Date.now() / 1000) + 600 });
}

let corePage: { dir: string; remove(): Promise<void> };
let uppyDir: string;
let ferry: RunningFerry;
let uppyFerry: RunningFerry;
let origin: Server;
let originUrl: string;
let browser: Browser;

beforeAll(async () => {
  corePage = await buildCorePage();
  uppyDir = await mkdtemp(join(tmpdir(), 'ferry-auth-uppy-'));
  await build({
    root: resolve(import.meta.dirname, 'pages', 'companion-uppy'),
    logLevel: 'error',
    configFile: false,
    build: { outDir: uppyDir, emptyOutDir: true, minify: false },
  });
  origin = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(LINK_SIZE) });
    if (req.method === 'HEAD') res.end();
    else res.end(Buffer.from(linkBytes));
  });
  await new Promise<void>((ok) => origin.listen(0, '127.0.0.1', ok));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/data/linked.bin`;
  ferry = await startFerry(['--ui-dir', corePage.dir, '--auth-secret', SECRET, '--allow-local-urls']);
  uppyFerry = await startFerry(['--ui-dir', uppyDir, '--auth-secret', SECRET]);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (ferry) await stopFerryFirmly(ferry);
  if (uppyFerry) await stopFerryFirmly(uppyFerry);
  await new Promise((ok) => origin?.close(ok));
  await corePage?.remove();
  await rm(uppyDir, { recursive: true, force: true });
});

async function open(url: string): Promise<Page> {
  const p = await browser.context.newPage();
  await p.goto(`${url}/`);
  await p.waitForFunction(() => (window as { ready?: boolean }).ready === true);
  return p;
}

type CoreWindow = {
  core: typeof import('@ferry/core');
  patternFile(name: string, size: number, seed: number, type?: string): File;
};

test('the engine headers function authorises every tus request; the bytes arrive', async () => {
  // Fresh tokens for every request, as an application that refreshes them would hand out.
  const tokens = Array.from({ length: 12 }, () => token('alice'));
  const p = await open(ferry.url);
  const out = await p.evaluate(
    async ({ tokens }) => {
      const { core, patternFile } = window as unknown as CoreWindow;
      let calls = 0;
      const engine = new core.Ferry({
        uploader: new core.TusUploader({ endpoint: '/files/', chunkSize: 256 * 1024, resume: false }),
        headers: () => ({ Authorization: `Bearer ${tokens[Math.min(calls++, tokens.length - 1)]}` }),
      });
      const id = engine.addFile({ data: patternFile('secret.bin', 900 * 1024, 5) });
      await engine.upload();
      const file = id ? engine.getFile(id) : undefined;
      return { state: file?.state, error: file?.error?.message, calls };
    },
    { tokens },
  );
  expect(out.error).toBeUndefined();
  expect(out.state).toBe('complete');
  // A file under the small-file size goes with its creation: the POST carries the first
  // 256 KiB, three PATCHes the rest, each request asking the function again.
  expect(out.calls).toBeGreaterThanOrEqual(4);
  const stored = (await storedTusUploads(ferry.dataDir)).find((u) => u.filename === 'secret.bin');
  expect(stored?.sha256).toBe(sha256Of(patternBytes(900 * 1024, 5)));
  await p.close();
}, 60_000);

test('without a token the file shows the server message and nothing is stored', async () => {
  const before = (await storedTusUploads(ferry.dataDir)).length;
  const p = await open(ferry.url);
  const out = await p.evaluate(async () => {
    const { core, patternFile } = window as unknown as CoreWindow;
    const engine = new core.Ferry({ uploader: new core.TusUploader({ endpoint: '/files/', resume: false }) });
    const id = engine.addFile({ data: patternFile('nope.bin', 10 * 1024, 6) });
    await engine.upload();
    const file = id ? engine.getFile(id) : undefined;
    return { state: file?.state, error: file?.error?.message, status: file?.error?.status };
  });
  expect(out).toEqual({ state: 'error', error: 'a bearer token is required', status: 401 });
  expect((await storedTusUploads(ferry.dataDir)).length).toBe(before);
  await p.close();
}, 60_000);

test('a link import with a token: url/meta, url/get and the progress socket are authorised', async () => {
  const bearer = token('bob');
  const p = await open(ferry.url);
  const out = await p.evaluate(
    async ({ link, bearer }) => {
      const { core } = window as unknown as CoreWindow;
      const engine = new core.Ferry({
        uploader: new core.TusUploader({ endpoint: '/files/' }),
        remoteUploader: new core.RemoteUploader({ endpoint: '/files/' }),
        companionUrl: location.origin,
        headers: async () => ({ Authorization: `Bearer ${bearer}` }),
      });
      const imported = await engine.importLink(link);
      await engine.upload();
      const file = imported.ok && imported.id ? engine.getFile(imported.id) : undefined;
      return { imported, state: file?.state, error: file?.error?.message, url: file?.uploadURL };
    },
    { link: originUrl, bearer },
  );
  expect(out.error).toBeUndefined();
  expect(out.state).toBe('complete');
  const res = await fetch(out.url ?? '', { headers: { authorization: `Bearer ${bearer}` } });
  expect(res.status).toBe(200);
  expect(sha256Of(new Uint8Array(await res.arrayBuffer()))).toBe(sha256Of(linkBytes));
  // Another subject cannot read it.
  const other = await fetch(out.url ?? '', { headers: { authorization: `Bearer ${token('eve')}` } });
  expect(other.status).toBe(404);
  await p.close();
}, 60_000);

test('released @uppy/tus uploads with an Authorization header', async () => {
  const bearer = token('carol');
  const bytes = patternBytes(300 * 1024, 9);
  const p = await open(uppyFerry.url);
  const out = await p.evaluate(
    async ({ bearer, data }) => {
      const w = window as unknown as {
        Uppy: new (
          opts: unknown,
        ) => {
          use(plugin: unknown, opts: unknown): void;
          addFile(f: unknown): string;
          upload(): Promise<{ successful?: { uploadURL?: string }[]; failed?: { error?: unknown }[] }>;
        };
        Tus: unknown;
      };
      const uppy = new w.Uppy({ autoProceed: false });
      uppy.use(w.Tus, { endpoint: `${location.origin}/files/`, headers: { Authorization: `Bearer ${bearer}` } });
      uppy.addFile({ name: 'uppy.bin', type: 'application/octet-stream', data: new Blob([new Uint8Array(data)]) });
      const result = await uppy.upload();
      return {
        failed: (result.failed ?? []).map((f) => String(f.error)),
        url: result.successful?.[0]?.uploadURL,
      };
    },
    { bearer, data: Array.from(bytes) },
  );
  expect(out.failed).toEqual([]);
  const res = await fetch(out.url ?? '', { headers: { authorization: `Bearer ${bearer}` } });
  expect(sha256Of(new Uint8Array(await res.arrayBuffer()))).toBe(sha256Of(bytes));
  await p.close();
}, 60_000);
