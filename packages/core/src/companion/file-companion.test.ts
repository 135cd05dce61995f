/**
 * A remote file's own companion (`remote.companionUrl`, spec §3): the transfer goes through it,
 * with or without an engine-level `companionUrl` (which is only the default), and a file restored
 * after a reload goes back to it. The companions are real HTTP servers on loopback; the progress
 * socket is a stand-in that the test drives.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDBFactory } from 'fake-indexeddb';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { Ferry, type FerryOptions } from '../ferry.ts';
import { FakeSocket } from '../test/fake-socket.ts';
import { RemoteUploader } from './remote.ts';

/**
 * A companion that answers `POST /url/get` and `POST /drive/get/{path}` with a token naming
 * itself, and records each call with the provider token it carried.
 */
interface Companion {
  url: string;
  calls: { path: string; body: Record<string, unknown>; token?: string }[];
  server: Server;
}

async function companion(name: string): Promise<Companion> {
  const calls: Companion['calls'] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => {
      raw += chunk.toString();
    });
    req.on('end', () => {
      const token = req.headers['uppy-auth-token'];
      calls.push({
        path: req.url ?? '',
        body: raw ? JSON.parse(raw) : {},
        ...(typeof token === 'string' ? { token } : {}),
      });
      const known = req.url === '/url/get' || req.url?.startsWith('/drive/get/');
      if (req.method !== 'POST' || !known) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: `${name}-${calls.length}` }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}

/** Bounded waits, generous for a loaded machine (a restore reads IndexedDB first). */
const WAIT = { timeout: 10_000 };

let a: Companion;
let b: Companion;
let sockets: FakeSocket[];
const engines: Ferry[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([companion('a'), companion('b')]);
});
afterAll(async () => {
  await Promise.all([a, b].map((c) => new Promise((ok) => c.server.close(ok))));
});
afterEach(() => {
  for (const e of engines.splice(0)) e.destroy();
  a.calls.length = 0;
  b.calls.length = 0;
});

function engine(options: FerryOptions = {}): Ferry {
  sockets = [];
  const ferry = new Ferry({
    online: { isOnline: () => true },
    remoteUploader: new RemoteUploader({
      endpoint: 'http://dest.test/files/',
      socket: (url) => {
        const socket = new FakeSocket(url);
        sockets.push(socket);
        return socket;
      },
    }),
    ...options,
  });
  engines.push(ferry);
  return ferry;
}

const link = (name: string, companionUrl?: string) => ({
  isRemote: true,
  name,
  size: 10,
  remote: {
    ...(companionUrl !== undefined ? { companionUrl } : {}),
    url: `http://origin.test/${name}`,
    body: { url: `http://origin.test/${name}` },
  },
});

/** The companion says the transfer is done. */
const succeed = (s: FakeSocket) => s.frame({ action: 'success', payload: { url: `${s.url}/done` } });

/** Opens and finishes the transfer of every socket opened so far. */
function finishAll() {
  for (const s of sockets) {
    s.open();
    succeed(s);
  }
}

test('a file that names its companion uploads through it when the engine has none', async () => {
  const ferry = engine();
  const id = ferry.addFile(link('own.bin', `${b.url}/`));
  const run = ferry.upload();
  await vi.waitFor(() => expect(sockets).toHaveLength(1), WAIT);
  expect(b.calls.map((c) => [c.path, c.body.url])).toEqual([['/url/get', 'http://origin.test/own.bin']]);
  expect(sockets[0]?.url).toBe(`${b.url.replace('http', 'ws')}/api/b-1`);
  finishAll();
  const summary = await run;
  expect(summary.failed.map((f) => f.error?.message)).toEqual([]);
  expect(summary.successful.map((f) => f.id)).toEqual([id]);
});

test("a file's companion wins over the engine's, which is the default for files that name none", async () => {
  const ferry = engine({ companionUrl: a.url });
  ferry.addFiles([link('to-b.bin', b.url), link('to-a.bin')]);
  const run = ferry.upload();
  await vi.waitFor(() => expect(sockets).toHaveLength(2), WAIT);
  expect(a.calls.map((c) => c.body.url)).toEqual(['http://origin.test/to-a.bin']);
  expect(b.calls.map((c) => c.body.url)).toEqual(['http://origin.test/to-b.bin']);
  expect(sockets.map((s) => new URL(s.url).port).sort()).toEqual([new URL(a.url).port, new URL(b.url).port].sort());
  finishAll();
  expect((await run).successful).toHaveLength(2);
});

test("a provider file on another companion goes through that companion's provider client and token", async () => {
  const ferry = engine({ companionUrl: a.url });
  ferry.providers.client('drive').setToken('token-at-a');
  ferry.providers.client('drive', `${b.url}/`).setToken('token-at-b');
  ferry.addFile({
    isRemote: true,
    source: 'drive',
    name: 'doc.txt',
    size: 10,
    remote: { companionUrl: b.url, providerName: 'drive', requestPath: 'doc-1', body: { fileId: 'doc-1' } },
  });
  const run = ferry.upload();
  await vi.waitFor(() => expect(sockets).toHaveLength(1), WAIT);
  expect(a.calls).toEqual([]);
  expect(b.calls.map((c) => [c.path, c.token, c.body.fileId])).toEqual([['/drive/get/doc-1', 'token-at-b', 'doc-1']]);
  finishAll();
  expect((await run).successful).toHaveLength(1);
});

test('a restored file keeps its companion: it reattaches there, not to the new engine companion', async () => {
  const db = new IDBFactory();
  const recovery = { indexedDB: db, opfs: false, throttle: 20 };
  const first = engine({ companionUrl: a.url, recovery });
  await first.recovery?.ready();
  const id = first.addFile(link('kept.bin', b.url));
  void first.upload();
  await vi.waitFor(() => expect(first.getFile(id ?? '')?.serverToken).toBe('b-1'), WAIT);
  await first.recovery?.flush();
  first.destroy();

  // The next page names another companion (or none would do): the file still goes to its own.
  const second = engine({ companionUrl: a.url, recovery });
  await vi.waitFor(() => expect(sockets).toHaveLength(1), WAIT);
  expect(second.getFile(id ?? '')?.remote?.companionUrl).toBe(b.url);
  expect(sockets[0]?.url).toBe(`${b.url.replace('http', 'ws')}/api/b-1`);
  sockets[0]?.open();
  // Reattached, not started again: no second `/url/get` anywhere; the socket is told to resume.
  expect(sockets[0]?.sent).toEqual([{ action: 'resume', payload: {} }]);
  expect([a.calls.length, b.calls.length]).toEqual([0, 1]);
  if (sockets[0]) succeed(sockets[0]);
  await vi.waitFor(() => expect(second.getFile(id ?? '')?.state).toBe('complete'), WAIT);
});

test('removing an idle transfer cancels it on the socket of its own companion', async () => {
  const ferry = engine();
  const id = ferry.addFile(link('idle.bin', b.url)) as string;
  ferry.setFileState(id, { serverToken: 'tok-9' });
  ferry.removeFile(id);
  await vi.waitFor(() => expect(sockets).toHaveLength(1), WAIT);
  expect(sockets[0]?.url).toBe(`${b.url.replace('http', 'ws')}/api/tok-9`);
  sockets[0]?.open();
  expect(sockets[0]?.sent).toEqual([{ action: 'cancel', payload: {} }]);
});
