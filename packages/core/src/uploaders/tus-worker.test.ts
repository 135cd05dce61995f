// @vitest-environment jsdom
/**
 * The upload Worker's stack on its own: response headers as XMLHttpRequest reads them, and
 * where no Worker can be made (this jsdom page has none) no stack at all, so the uploader keeps
 * the page's. The uploads through it are tested in tus.test.ts, against a real server.
 */
import { expect, test } from 'vitest';
import { parseHeaders, WORKER_SOURCE, workerHttpStack } from './tus-worker.ts';

test('response headers are read case-insensitively; repeated ones joined; blank lines skipped', () => {
  const headers = parseHeaders('Location: /files/1\r\nupload-offset: 10\r\nVary: a\r\nvary: b\r\n\r\n');
  expect(headers.get('location')).toBe('/files/1');
  expect(headers.get('upload-offset')).toBe('10');
  expect(headers.get('vary')).toBe('a, b');
  expect(headers.size).toBe(3);
});

test('where no Worker can be made there is no worker stack', () => {
  expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe('undefined');
  expect(workerHttpStack({ createRequest: () => undefined as never, getName: () => 'page' })).toBeUndefined();
});

test("the Worker's source runs on its own: nothing from outside its body", () => {
  // What the page hands the Worker, run in a scope of its own: it must only listen, not fail.
  const listened: string[] = [];
  const scope = { addEventListener: (type: string) => listened.push(type), postMessage: () => undefined };
  new Function('self', WORKER_SOURCE)(scope);
  expect(listened).toEqual(['message']);
});
