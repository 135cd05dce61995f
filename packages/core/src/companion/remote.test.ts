import { describe, expect, it, vi } from 'vitest';
import { fakeCompanion } from '../test/fake-companion.ts';
import { FakeSocket } from '../test/fake-socket.ts';
import type { FerryFile } from '../types.ts';
import type { AbortReason, UploadContext } from '../uploader.ts';
import { withAccessToken } from './http.ts';
import { ProviderClient } from './provider.ts';
import { RemoteUploader, urlMeta } from './remote.ts';

function remoteFile(extra: Partial<FerryFile> = {}): FerryFile {
  return {
    id: 'f1',
    name: 'cat.png',
    type: 'image/png',
    size: 100,
    meta: { caption: 'hi' },
    isRemote: true,
    data: null,
    remote: {
      url: 'https://x.test/cat.png',
      body: { url: 'https://x.test/cat.png' },
    },
    ...extra,
  } as unknown as FerryFile;
}

function setup() {
  const sockets: FakeSocket[] = [];
  const fetchMock = vi.fn(async () => new Response(JSON.stringify({ token: 'tok123' }), { status: 200 }));
  const uploader = new RemoteUploader({
    endpoint: 'http://dest.test/files/',
    fetch: fetchMock as unknown as typeof fetch,
    socket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
  });
  const controller = new AbortController();
  let reason: AbortReason | undefined;
  const progress: Array<[number, number | null]> = [];
  const patches: unknown[] = [];
  const ctx: UploadContext = {
    signal: controller.signal,
    onProgress: (a, b) => progress.push([a, b]),
    patchFile: (p) => patches.push(p),
    reason: () => reason,
    isOnline: () => true,
    i18n: (k) => (k === 'companionError' ? 'Connection with Companion failed' : k),
    companionUrl: 'http://companion.test/',
  };
  const abort = (r: AbortReason) => {
    reason = r;
    controller.abort();
  };
  return { uploader, sockets, fetchMock, ctx, progress, patches, abort };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

async function until(check: () => boolean) {
  for (let i = 0; i < 50 && !check(); i++) await flush();
}

describe('RemoteUploader', () => {
  it('posts the upload body, follows the socket and resolves on success', async () => {
    const t = setup();
    const done = t.uploader.upload(remoteFile(), t.ctx);
    await flush();
    expect(t.fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = t.fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('http://companion.test/url/get');
    expect(JSON.parse(String(init.body))).toEqual({
      url: 'https://x.test/cat.png',
      fileId: 'f1',
      protocol: 'tus',
      endpoint: 'http://dest.test/files/',
      size: 100,
      metadata: { caption: 'hi', name: 'cat.png', type: 'image/png' },
      headers: {},
    });
    expect(t.patches).toEqual([{ serverToken: 'tok123' }]);
    const s = t.sockets[0];
    expect(s?.url).toBe('ws://companion.test/api/tok123');
    s?.open();
    s?.frame({ action: 'progress', payload: { progress: '40.00', bytesUploaded: 40, bytesTotal: 100 } });
    s?.frame({ action: 'progress', payload: { progress: '0.00', bytesUploaded: 7, bytesTotal: 0 } });
    s?.frame({ action: 'success', payload: { complete: true, url: 'http://dest.test/files/abc' } });
    await expect(done).resolves.toEqual({ uploadURL: 'http://dest.test/files/abc', status: 200 });
    expect(t.progress).toEqual([
      [40, 100],
      [7, null],
    ]);
    expect(s?.closed).toBe(true);
  });

  it('parses a multipart answer', async () => {
    const t = setup();
    const done = t.uploader.upload(remoteFile(), t.ctx);
    await flush();
    t.sockets[0]?.open();
    t.sockets[0]?.frame({
      action: 'success',
      payload: { complete: true, url: '/upload/1', response: { responseText: '{"url":"/upload/1"}', status: 201 } },
    });
    await expect(done).resolves.toEqual({ uploadURL: '/upload/1', body: { url: '/upload/1' }, status: 201 });
  });

  it('rejects with the error frame message', async () => {
    const t = setup();
    const done = t.uploader.upload(remoteFile(), t.ctx);
    await flush();
    t.sockets[0]?.open();
    t.sockets[0]?.frame({
      action: 'error',
      payload: { error: { message: 'Upload stalled for 30 seconds, aborting.' } },
    });
    await expect(done).rejects.toThrow('Upload stalled for 30 seconds, aborting.');
  });

  it('maps pause to the pause action and resumes on the same token', async () => {
    const t = setup();
    const first = t.uploader.upload(remoteFile(), t.ctx);
    await flush();
    t.sockets[0]?.open();
    t.abort('pause');
    await expect(first).rejects.toThrow();
    expect(t.sockets[0]?.sent).toEqual([{ action: 'pause', payload: {} }]);
    const t2 = setup();
    const second = t2.uploader.upload(remoteFile({ serverToken: 'tok123' }), t2.ctx);
    await flush();
    expect(t2.fetchMock).not.toHaveBeenCalled();
    const s = t2.sockets[0];
    expect(s?.url).toBe('ws://companion.test/api/tok123');
    s?.open();
    expect(s?.sent).toEqual([{ action: 'resume', payload: {} }]);
    s?.frame({ action: 'success', payload: { complete: true, url: 'u' } });
    await expect(second).resolves.toMatchObject({ uploadURL: 'u' });
  });

  it('maps cancel and remove to the cancel action', async () => {
    for (const reason of ['cancel', 'remove'] as const) {
      const t = setup();
      const run = t.uploader.upload(remoteFile(), t.ctx);
      await flush();
      t.sockets[0]?.open();
      t.abort(reason);
      await expect(run).rejects.toThrow();
      expect(t.sockets[0]?.sent).toEqual([{ action: 'cancel', payload: {} }]);
    }
  });

  it('reports a refused request with the companion message and status', async () => {
    const t = setup();
    t.fetchMock.mockResolvedValueOnce(
      new Response(JSON.stringify({ message: 'no destination specified' }), { status: 400 }),
    );
    await expect(t.uploader.upload(remoteFile(), t.ctx)).rejects.toMatchObject({
      message: 'no destination specified',
      status: 400,
      retryable: false,
    });
  });

  it('uses the provider route for provider files', async () => {
    const t = setup();
    const file = remoteFile({
      remote: { providerName: 'drive', body: { id: 'a/b' } },
    } as Partial<FerryFile>);
    const run = t.uploader.upload(file, t.ctx);
    await flush();
    expect((t.fetchMock.mock.calls[0] as unknown as [string])[0]).toBe('http://companion.test/drive/get/a%2Fb');
    t.sockets[0]?.open();
    t.sockets[0]?.frame({ action: 'success', payload: { url: 'x' } });
    await run;
  });
});

describe('provider files', () => {
  it('POST /{p}/get/{requestPath} through the engine provider client: token header, one refresh on 401, uploader body', async () => {
    const t = setup();
    const fake = fakeCompanion({});
    fake.refreshable.add('expired');
    const client = new ProviderClient({ companionUrl: 'http://companion.test/', id: 'drive', fetch: fake.fetch });
    client.setToken('expired');
    const file = remoteFile({
      source: 'drive',
      remote: { providerName: 'drive', requestPath: 'a1%2Fb?x=1', body: { fileId: 'a1' } },
    } as Partial<FerryFile>);
    const run = t.uploader.upload(file, { ...t.ctx, providerClient: (id) => (id === 'drive' ? client : undefined) });
    await until(() => t.sockets.length === 1);
    expect(fake.calls.map((c) => [c.method, c.path, c.token])).toEqual([
      ['POST', '/drive/get/a1%2Fb?x=1', 'expired'],
      ['POST', '/drive/refresh-token', 'expired'],
      ['POST', '/drive/get/a1%2Fb?x=1', 'refreshed-1'],
    ]);
    expect(fake.calls[2]?.body).toMatchObject({
      fileId: 'a1',
      protocol: 'tus',
      endpoint: 'http://dest.test/files/',
      size: 100,
      metadata: { caption: 'hi', name: 'cat.png', type: 'image/png' },
    });
    expect(t.sockets[0]?.url).toBe('ws://companion.test/api/transfer-a1/b');
    t.sockets[0]?.open();
    t.sockets[0]?.frame({ action: 'success', payload: { url: 'http://dest.test/files/1' } });
    await expect(run).resolves.toMatchObject({ uploadURL: 'http://dest.test/files/1' });
    expect(t.fetchMock).not.toHaveBeenCalled();
  });

  it('a provider token refused for good fails the file with Authorization required, not retryable', async () => {
    const t = setup();
    const fake = fakeCompanion({});
    const client = new ProviderClient({ companionUrl: 'http://companion.test', id: 'drive', fetch: fake.fetch });
    client.setToken('revoked');
    const file = remoteFile({ remote: { providerName: 'drive', requestPath: 'x', body: {} } } as Partial<FerryFile>);
    const ctx = { ...t.ctx, i18n: (k: string) => (k === 'authRequired' ? 'Authorization required' : k) };
    await expect(t.uploader.upload(file, { ...ctx, providerClient: () => client })).rejects.toMatchObject({
      message: 'Authorization required',
      status: 401,
      retryable: false,
    });
    expect(client.token).toBeNull();
  });
});

describe('fileId in the /get body', () => {
  it('is the provider id a provider file carries, not the engine id; a link without one sends the engine id', async () => {
    const t = setup();
    const provider = remoteFile({
      id: 'ferry-abc-1',
      remote: { providerName: 'drive', requestPath: 'prov-77', body: { fileId: 'prov-77' } },
    } as Partial<FerryFile>);
    const link = remoteFile({ id: 'ferry-abc-2' } as Partial<FerryFile>);
    for (const file of [provider, link]) {
      const run = t.uploader.upload(file, t.ctx);
      await until(() => t.sockets.length === t.fetchMock.mock.calls.length);
      t.sockets.at(-1)?.open();
      t.sockets.at(-1)?.frame({ action: 'success', payload: { url: 'x' } });
      await run;
    }
    const bodies = (t.fetchMock.mock.calls as unknown as [string, RequestInit][]).map(([url, init]) => [
      url,
      JSON.parse(String(init.body)).fileId,
    ]);
    expect(bodies).toEqual([
      ['http://companion.test/drive/get/prov-77', 'prov-77'],
      ['http://companion.test/url/get', 'ferry-abc-2'],
    ]);
  });
});

describe('the engine companion', () => {
  it('an engine without companionUrl fails the transfer before any request', async () => {
    const t = setup();
    const { companionUrl: _, ...ctx } = t.ctx;
    await expect(t.uploader.upload(remoteFile(), ctx)).rejects.toMatchObject({
      message: 'Connection with Companion failed',
      retryable: false,
    });
    expect(t.fetchMock).not.toHaveBeenCalled();
  });

  it('cancel of an idle transfer sends cancel on the socket of the engine companion', async () => {
    const t = setup();
    const cancelled = t.uploader.cancel(remoteFile({ serverToken: 'tok9' }), { companionUrl: 'https://c.test/base/' });
    expect(t.sockets[0]?.url).toBe('wss://c.test/base/api/tok9');
    t.sockets[0]?.open();
    await cancelled;
    expect(t.sockets[0]?.sent).toEqual([{ action: 'cancel', payload: {} }]);
    expect(t.sockets[0]?.closed).toBe(true);
  });
});

describe('engine headers', () => {
  it('the progress socket carries the bearer token as access_token', async () => {
    const t = setup();
    const cancelled = t.uploader.cancel(remoteFile({ serverToken: 'tok9' }), {
      companionUrl: 'https://c.test',
      headers: async () => ({ Authorization: 'Bearer a.b c' }),
    });
    await vi.waitFor(() => expect(t.sockets[0]).toBeDefined());
    expect(t.sockets[0]?.url).toBe('wss://c.test/api/tok9?access_token=a.b%20c');
    t.sockets[0]?.open();
    await cancelled;
  });

  it('withAccessToken keeps URLs without a bearer token as they are', () => {
    expect(withAccessToken('wss://c/api/t', {})).toBe('wss://c/api/t');
    expect(withAccessToken('wss://c/api/t', { authorization: 'Basic x' })).toBe('wss://c/api/t');
    expect(withAccessToken('https://c/x?a=1', { Authorization: 'bearer tok' })).toBe(
      'https://c/x?a=1&access_token=tok',
    );
  });
});

describe('urlMeta', () => {
  it('returns the meta or throws the companion message', async () => {
    const ok = vi.fn(async () => new Response(JSON.stringify({ name: 'a.txt', type: 'text/plain', size: null })));
    await expect(urlMeta('http://c.test/', 'https://x/a.txt', ok as unknown as typeof fetch)).resolves.toEqual({
      name: 'a.txt',
      type: 'text/plain',
      size: null,
    });
    expect((ok.mock.calls[0] as unknown as [string])[0]).toBe('http://c.test/url/meta');
    const bad = vi.fn(async () => new Response(JSON.stringify({ message: 'URL not allowed' }), { status: 400 }));
    await expect(urlMeta('http://c.test', 'http://127.0.0.1/', bad as unknown as typeof fetch)).rejects.toThrow(
      'URL not allowed',
    );
  });

  it('treats a 200 answer with an error field as a failed fetch, keeping the status', async () => {
    const withError = vi.fn(async () => new Response(JSON.stringify({ error: 'could not reach the file' })));
    const failure = await urlMeta('http://c.test', 'https://x/a', withError as unknown as typeof fetch).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('could not reach the file');
    expect((failure as { status?: number }).status).toBe(200);
  });
});
