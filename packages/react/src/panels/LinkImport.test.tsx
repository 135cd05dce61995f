import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ferry } from '@ferry/core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ManualUploader } from '../test/manual-uploader.ts';
import { importLinkWithToast } from './LinkImport.tsx';

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

test('an import adds the file through the engine companion, or through the deprecated override', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader(), companionUrl: base });
  const id = await importLinkWithToast(ferry, t, 'origin.test/ok.bin');
  expect(ferry.getFile(id ?? '')).toMatchObject({ name: 'ok.bin', isRemote: true });
  const other = new Ferry({ uploader: new ManualUploader() });
  expect(await importLinkWithToast(other, t, 'origin.test/ok.bin', base)).toBe(other.getFiles()[0]?.id);
  expect(other.getFiles()).toHaveLength(1);
  ferry.destroy();
  other.destroy();
});

test('an error answer toasts failedToFetchFile, an unreachable companion failedToFetch, both for 4 s', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader(), companionUrl: base });
  expect(await importLinkWithToast(ferry, t, 'http://origin.test/gone')).toBeNull();
  expect(await importLinkWithToast(ferry, t, 'http://origin.test/ok.bin', 'http://127.0.0.1:9')).toBeNull();
  expect(await importLinkWithToast(ferry, t, 'ftp://origin.test/x')).toBeNull();
  expect(ferry.getState().info.map((i) => [i.message, i.duration])).toEqual([
    ['failedToFetchFile', 4000],
    ['failedToFetch', 4000],
    ['incorrectUrl', 4000],
  ]);
  expect(ferry.getState().info[0]?.details).toBe('the source answered 404');
  expect(ferry.getFiles()).toEqual([]);
  ferry.destroy();
});
