import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { fetchUrlMeta, LinkImportError, linkDescriptor, normaliseUrl } from './link.ts';

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

// A real companion stand-in on loopback answering /url/meta three ways.
let server: Server;
let base = '';
const seen: unknown[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const { url } = JSON.parse(body) as { url: string };
      seen.push({ method: req.method, path: req.url, type: req.headers['content-type'], url });
      res.setHeader('content-type', 'application/json');
      if (url.endsWith('/ok.bin')) res.end(JSON.stringify({ name: 'ok.bin', type: 'application/x-test', size: 42 }));
      else if (url.endsWith('/gone')) res.end(JSON.stringify({ error: true, message: 'origin answered 404' }));
      else {
        res.statusCode = 500;
        res.end('{}');
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

test('fetchUrlMeta posts {url} to /url/meta and reads name, type, size', async () => {
  const meta = await fetchUrlMeta(`${base}/`, 'http://origin.test/ok.bin');
  expect(meta).toEqual({ name: 'ok.bin', type: 'application/x-test', size: 42 });
  expect(seen.at(-1)).toEqual({
    method: 'POST',
    path: '/url/meta',
    type: 'application/json',
    url: 'http://origin.test/ok.bin',
  });
  expect(linkDescriptor(base, 'http://origin.test/ok.bin', meta)).toMatchObject({
    isRemote: true,
    source: 'url',
    name: 'ok.bin',
    size: 42,
    remote: { companionUrl: base, url: 'http://origin.test/ok.bin', body: { url: 'http://origin.test/ok.bin' } },
  });
});

test('an error answer is failedToFetchFile; a failed call is failedToFetch', async () => {
  await expect(fetchUrlMeta(base, 'http://origin.test/gone')).rejects.toMatchObject({ code: 'failedToFetchFile' });
  await expect(fetchUrlMeta(base, 'http://origin.test/boom')).rejects.toMatchObject({ code: 'failedToFetch' });
  const closed = 'http://127.0.0.1:9';
  await expect(fetchUrlMeta(closed, 'http://origin.test/ok.bin')).rejects.toBeInstanceOf(LinkImportError);
});

test('a missing name falls back to the last path segment', () => {
  expect(linkDescriptor(base, 'http://o.test/dir/my%20file.pdf', { size: null })).toMatchObject({
    name: 'my file.pdf',
    type: 'application/octet-stream',
    size: null,
  });
});
