/**
 * An import under a provider's rate limit, on the file as a wait with its countdown (fake
 * timers): the companion's `waiting` frame counts down until bytes move again; a `get` answered
 * 429 is sent again after `Retry-After`, and still limited after the waits it fails with a final
 * message naming the provider (not the 429's own, which says it is retrying).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { translate } from '../locale.ts';
import { fakeCompanion } from '../test/fake-companion.ts';
import { FakeSocket } from '../test/fake-socket.ts';
import type { FerryFile, Waiting } from '../types.ts';
import type { UploadContext } from '../uploader.ts';
import { ProviderClient } from './provider.ts';
import { RemoteUploader } from './remote.ts';

const file = {
  id: 'f1',
  name: 'beach.jpg',
  type: 'image/jpeg',
  size: 100,
  meta: {},
  isRemote: true,
  data: null,
  source: 'drive',
  remote: { providerName: 'drive', requestPath: 'beach', body: { fileId: 'beach' } },
} as unknown as FerryFile;

function setup() {
  const fake = fakeCompanion({});
  const client = new ProviderClient({
    companionUrl: 'http://c.test',
    id: 'drive',
    name: 'Google Drive',
    fetch: fake.fetch,
  });
  client.setToken('good');
  const sockets: FakeSocket[] = [];
  const uploader = new RemoteUploader({
    endpoint: 'http://dest.test/files/',
    socket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
  });
  // The file's `waiting` as the engine would hold it: the last patch wins.
  let waiting: Waiting | undefined;
  const controller = new AbortController();
  const ctx: UploadContext = {
    signal: controller.signal,
    onProgress: () => undefined,
    patchFile: (p) => {
      if ('waiting' in p) waiting = p.waiting;
    },
    reason: () => 'pause',
    isOnline: () => true,
    i18n: (k, vars) => translate({}, k, vars),
    companionUrl: 'http://c.test',
    providerClient: () => client,
  };
  return { fake, sockets, uploader, ctx, controller, waiting: () => waiting };
}

describe('RemoteUploader under a rate limit', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("counts the companion's `waiting` frame down on the file until bytes move again", async () => {
    const t = setup();
    const run = t.uploader.upload(file, t.ctx);
    await vi.advanceTimersByTimeAsync(0);
    const socket = t.sockets[0] as FakeSocket;
    socket.open();
    socket.frame({ action: 'progress', payload: { bytesUploaded: 40, bytesTotal: 100 } });
    socket.frame({ action: 'waiting', payload: { retryAfter: 12, message: 'Google Drive is limiting requests' } });
    expect(t.waiting()).toEqual({
      seconds: 12,
      retryAfter: 12,
      message: 'Google Drive is limiting requests',
      attempt: 1,
    });
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.waiting()?.seconds).toBe(9);
    socket.frame({ action: 'progress', payload: { bytesUploaded: 60, bytesTotal: 100 } });
    expect(t.waiting()).toBeUndefined();
    // A second wait is the second attempt.
    socket.frame({ action: 'waiting', payload: { retryAfter: 5, message: 'again' } });
    expect(t.waiting()).toMatchObject({ seconds: 5, attempt: 2 });
    socket.frame({ action: 'success', payload: { url: 'http://dest.test/files/1' } });
    await expect(run).resolves.toMatchObject({ uploadURL: 'http://dest.test/files/1' });
    expect(t.waiting()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.waiting()).toBeUndefined();
  });

  it('sends a `get` answered 429 again after Retry-After, counting down on the file', async () => {
    const t = setup();
    t.fake.rateLimited = 1;
    const run = t.uploader.upload(file, t.ctx);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.waiting()).toMatchObject({ seconds: 12, message: 'The provider is rate limiting requests' });
    await vi.advanceTimersByTimeAsync(11_000);
    expect(t.waiting()?.seconds).toBe(1);
    expect(t.sockets).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.waiting()).toBeUndefined();
    expect(t.fake.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST /drive/get/beach',
      'POST /drive/get/beach',
    ]);
    t.sockets[0]?.open();
    t.sockets[0]?.frame({ action: 'success', payload: { url: 'u' } });
    await expect(run).resolves.toMatchObject({ uploadURL: 'u' });
  });

  it('still limited after the waits: a final message, not the retrying one, and not retried by the engine', async () => {
    const t = setup();
    t.fake.rateLimited = 10;
    t.fake.retryAfter = 2;
    const outcome = t.uploader.upload(file, t.ctx).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await outcome).toMatchObject({
      message: 'Google Drive is still limiting requests. Please try again in a few minutes.',
      status: 429,
      retryable: false,
    });
    expect(t.fake.calls).toHaveLength(4);
    expect(t.waiting()).toBeUndefined();
  });

  it('a pause during the wait ends it without another request', async () => {
    const t = setup();
    t.fake.rateLimited = 1;
    const outcome = t.uploader.upload(file, t.ctx).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(2000);
    t.controller.abort();
    expect(await outcome).toMatchObject({ message: 'aborted', retryable: false });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.waiting()).toBeUndefined();
  });
});
