import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ferry } from '@ferry/core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ManualUploader } from '../test/manual-uploader.ts';
import { importLink } from './LinkImport.tsx';
import { linkDescriptor, normaliseUrl } from './link.ts';

test.each([
  ['example.com/cat.jpg', 'http://example.com/cat.jpg'],
  ['  https://example.com/a b.png ', 'https://example.com/a b.png'],
  ['localhost:8080/file', 'http://localhost:8080/file'],
  ['HTTP://EXAMPLE.COM/x', 'HTTP://EXAMPLE.COM/x'],
  ['ftp://example.com/file', null],
  ['javascript:alert(1)', null],
  ['file:///etc/passwd', null],
  ['', null],
  ['http://', null],
])('normaliseUrl(%j) = %j', (input, out) => {
  expect(normaliseUrl(input)).toBe(out);
});

// A companion stand-in on loopback: /url/meta knows one file and answers 424 for the rest.
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const { url } = JSON.parse(body) as { url: string };
      res.setHeader('content-type', 'application/json');
      if (req.url === '/url/meta' && url === 'http://origin.test/ok.bin') {
        res.end(JSON.stringify({ name: 'ok.bin', type: 'application/x-test', size: 42 }));
      } else {
        res.statusCode = 424;
        res.end(JSON.stringify({ message: 'the source answered 404' }));
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

const t = (key: string) => key;
const engine = () => new Ferry({ uploader: new ManualUploader() });

test('a bare address gets http:// and becomes a remote file that uploads through the companion', async () => {
  const ferry = engine();
  const id = await importLink(ferry, t, `${base}/`, 'origin.test/ok.bin');
  expect(ferry.getFile(id ?? '')).toMatchObject({
    isRemote: true,
    source: 'url',
    name: 'ok.bin',
    type: 'application/x-test',
    size: 42,
    data: null,
    remote: { companionUrl: `${base}/`, url: 'http://origin.test/ok.bin', body: { url: 'http://origin.test/ok.bin' } },
  });
});

test('an error answer toasts failedToFetchFile, an unreachable companion failedToFetch, both for 4 s', async () => {
  const ferry = engine();
  expect(await importLink(ferry, t, base, 'http://origin.test/gone')).toBeNull();
  expect(await importLink(ferry, t, 'http://127.0.0.1:9', 'http://origin.test/ok.bin')).toBeNull();
  expect(await importLink(ferry, t, base, 'ftp://origin.test/x')).toBeNull();
  expect(ferry.getState().info.map((i) => [i.message, i.duration])).toEqual([
    ['failedToFetchFile', 4000],
    ['failedToFetch', 4000],
    ['incorrectUrl', 4000],
  ]);
  expect(ferry.getState().info[0]?.details).toBe('the source answered 404');
  expect(ferry.getFiles()).toEqual([]);
  ferry.destroy();
});

test('a missing name falls back to the last path segment', () => {
  expect(linkDescriptor(base, 'http://o.test/dir/my%20file.pdf', { size: null })).toMatchObject({
    name: 'my file.pdf',
    type: 'application/octet-stream',
    size: null,
  });
});
