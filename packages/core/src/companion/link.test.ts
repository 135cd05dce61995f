import { expect, test } from 'vitest';
import { Ferry } from '../ferry.ts';
import { urlMetaForSuite } from '../test/url-meta.ts';
import { importLink, linkDescriptor, normaliseUrl } from './link.ts';

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
const meta = urlMetaForSuite();

const engine = (companionUrl?: string) => new Ferry({ companionUrl, online: { isOnline: () => true } });

test('a bare address gets http:// and becomes a remote file that uploads through the companion', async () => {
  const ferry = engine(`${meta.base}/`);
  const result = await ferry.importLink('origin.test/ok.bin');
  expect(result).toEqual({ ok: true, id: ferry.getFiles()[0]?.id });
  expect(ferry.getFiles()[0]).toMatchObject({
    isRemote: true,
    source: 'url',
    name: 'ok.bin',
    type: 'application/x-test',
    size: 42,
    data: null,
    remote: { url: 'http://origin.test/ok.bin', body: { url: 'http://origin.test/ok.bin' } },
  });
  expect(ferry.getFiles()[0]?.remote).not.toHaveProperty('companionUrl');
  ferry.destroy();
});

test('failures come back as codes and add nothing: fetch-failed, companion-error, invalid-url', async () => {
  const ferry = engine(meta.base);
  expect(await ferry.importLink('http://origin.test/gone')).toEqual({
    ok: false,
    code: 'fetch-failed',
    details: 'the source answered 404',
  });
  expect(await importLink(ferry, 'http://origin.test/ok.bin', { companionUrl: 'http://127.0.0.1:9' })).toMatchObject({
    ok: false,
    code: 'companion-error',
  });
  expect(await ferry.importLink('ftp://origin.test/x')).toEqual({ ok: false, code: 'invalid-url' });
  expect(await engine().importLink('http://origin.test/ok.bin')).toEqual({
    ok: false,
    code: 'companion-error',
    details: 'No companionUrl is set',
  });
  expect(ferry.getFiles()).toEqual([]);
  expect(ferry.getState().info).toEqual([]);
  ferry.destroy();
});

test('an override companion wins over the engine one', async () => {
  const ferry = engine('http://127.0.0.1:9');
  expect(await importLink(ferry, 'http://origin.test/ok.bin', { companionUrl: meta.base })).toMatchObject({ ok: true });
  expect(ferry.getFiles().map((f) => f.name)).toEqual(['ok.bin']);
  // The file names the companion that found it, so its transfer goes there too.
  expect(ferry.getFiles()[0]?.remote?.companionUrl).toBe(meta.base);
  ferry.destroy();
});

test('a missing name falls back to the last path segment', () => {
  expect(linkDescriptor('http://o.test/dir/my%20file.pdf', { size: null })).toMatchObject({
    name: 'my file.pdf',
    type: 'application/octet-stream',
    size: null,
  });
});
