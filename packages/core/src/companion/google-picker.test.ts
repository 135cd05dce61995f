/**
 * Google's pickers (`google-picker.ts`) over a fake Google (`GoogleEnv`) and a fake Photos Picker
 * API (fake timers: the polling runs on the test's clock): Drive asks `drive.file`, opens the
 * picker with the page's key and app id and adds each picked document as a remote file for
 * `/google-picker/get`; the token is reused within its hour; a cancel adds nothing. Photos opens
 * a session, shows its page, polls at Google's interval until picked, pages the media items,
 * deletes the session and adds photo and video (`=d` / `=dv`); a session that runs out says so.
 * Discovery shows pickers only with the page's Google app, and the remote uploader posts a picked
 * file to the route it names.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import type { GoogleEnv, PickedDoc } from './google-env.ts';
import { GooglePicker, type PickerHost, seconds } from './google-picker.ts';
import { routeOn } from './remote.ts';

function host() {
  const added: unknown[] = [];
  const h: PickerHost = {
    addFiles: (d) => {
      const list = [...d];
      added.push(...list);
      return list.map((_, i) => `f${i}`);
    },
    i18n: (k) => k,
  };
  return { host: h, added };
}

function fakeEnv(docs: PickedDoc[] | null) {
  const env = {
    loads: [] as string[],
    scopes: [] as string[],
    shown: [] as unknown[],
    load: vi.fn(async (kind: 'drive' | 'photos') => {
      env.loads.push(kind);
    }),
    requestToken: vi.fn(async (_clientId: string, scope: string) => {
      env.scopes.push(scope);
      return { accessToken: `tok-${env.scopes.length}`, expiresAt: Date.now() + 3_540_000 };
    }),
    showDrivePicker: vi.fn(async (o: unknown) => {
      env.shown.push(o);
      return docs;
    }),
  };
  return env satisfies GoogleEnv;
}

const options = { clientId: 'cid', apiKey: 'key', appId: '42' };

describe('Drive Picker', () => {
  it('asks drive.file, shows the picker with key and app id, adds the picked files for /google-picker/get', async () => {
    const env = fakeEnv([
      { id: 'd1', name: 'report.pdf', mimeType: 'application/pdf', sizeBytes: '500' },
      { id: 'd2', name: 'beach.jpg', mimeType: 'image/jpeg' },
    ]);
    const h = host();
    const picker = new GooglePicker('drive', 'Google Drive Picker', options, h.host, {
      companionUrl: 'http://c.test/',
      env,
    });
    expect(await picker.pick()).toBe(2);
    expect(env.scopes).toEqual(['https://www.googleapis.com/auth/drive.file']);
    expect(env.shown).toEqual([{ token: 'tok-1', apiKey: 'key', appId: '42' }]);
    expect(h.added).toEqual([
      {
        isRemote: true,
        source: 'google-drive-picker',
        name: 'report.pdf',
        type: 'application/pdf',
        size: 500,
        data: null,
        remote: {
          url: 'http://c.test/google-picker/get',
          body: { platform: 'drive', fileId: 'd1', accessToken: 'tok-1' },
        },
      },
      expect.objectContaining({ name: 'beach.jpg', size: null }),
    ]);
    expect(picker.getState()).toEqual({ status: 'idle', error: null, pickerUri: null });
    // Within the token's hour, a second pick asks Google for nothing new.
    await picker.pick();
    expect(env.requestToken).toHaveBeenCalledTimes(1);
  });

  it('a cancelled picker adds nothing; a refused token is the error', async () => {
    const env = fakeEnv(null);
    const h = host();
    const picker = new GooglePicker('drive', 'Google Drive Picker', options, h.host, {
      companionUrl: 'http://c.test',
      env,
    });
    expect(await picker.pick()).toBe(0);
    expect(h.added).toEqual([]);
    expect(picker.getState().status).toBe('idle');
    env.requestToken.mockRejectedValueOnce(new Error('access_denied'));
    const other = new GooglePicker('drive', 'Google Drive Picker', options, h.host, {
      companionUrl: 'http://c.test',
      env,
    });
    expect(await other.pick()).toBe(0);
    expect(other.getState()).toMatchObject({ status: 'error', error: 'access_denied' });
  });
});

describe('Photos Picker', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A Photos Picker API: picked after `pickedAfter` polls, two pages of items. */
  function fakePhotos(pickedAfter: number, timeoutIn = '1800s') {
    const calls: string[] = [];
    let polls = 0;
    const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status });
    const fetchImpl = (async (input: string | URL | Request, init: RequestInit = {}) => {
      const url = new URL(String(input));
      const auth = (init.headers as Record<string, string>).authorization;
      calls.push(`${init.method} ${url.origin}${url.pathname}${url.search} ${auth}`);
      const session = (set: boolean) => ({
        id: 's 1',
        pickerUri: 'https://photos.example/picker/s1',
        pollingConfig: { pollInterval: '2s', timeoutIn },
        mediaItemsSet: set,
      });
      if (init.method === 'POST') return json(session(false));
      if (init.method === 'DELETE') return json({});
      if (url.pathname.includes('/v1/sessions/')) {
        polls += 1;
        return json(session(polls > pickedAfter));
      }
      if (url.searchParams.get('pageToken') === null) {
        const photo = { baseUrl: 'https://lh3.example/p', mimeType: 'image/jpeg', filename: 'IMG.jpg' };
        return json({ mediaItems: [{ id: 'm1', type: 'PHOTO', mediaFile: photo }], nextPageToken: 'n2' });
      }
      const video = { baseUrl: 'https://lh3.example/v', mimeType: 'video/mp4', filename: 'VID.mp4' };
      return json({ mediaItems: [{ id: 'm2', type: 'VIDEO', mediaFile: video }] });
    }) as typeof fetch;
    return { calls, fetch: fetchImpl };
  }

  it('opens a session, polls at its interval until picked, pages the items, deletes the session and adds them', async () => {
    const env = fakeEnv(null);
    const api = fakePhotos(2);
    const h = host();
    // Google's Photos Picker API through a proxy (`urls.photos`), as a page may configure it.
    const through = { clientId: 'cid', urls: { photos: 'https://proxy.example/photos/' } };
    const picker = new GooglePicker('photos', 'Google Photos Picker', through, h.host, {
      companionUrl: 'http://c.test',
      env,
      fetch: api.fetch,
    });
    const done = picker.pick();
    await vi.advanceTimersByTimeAsync(0);
    expect(env.scopes).toEqual(['https://www.googleapis.com/auth/photospicker.mediaitems.readonly']);
    expect(picker.getState()).toMatchObject({ status: 'picking', pickerUri: 'https://photos.example/picker/s1' });
    await vi.advanceTimersByTimeAsync(3999);
    expect(api.calls.filter((c) => c.includes('/v1/sessions/'))).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2001);
    expect(await done).toBe(2);
    expect(api.calls).toEqual([
      'POST https://proxy.example/photos/v1/sessions Bearer tok-1',
      'GET https://proxy.example/photos/v1/sessions/s%201 Bearer tok-1',
      'GET https://proxy.example/photos/v1/sessions/s%201 Bearer tok-1',
      'GET https://proxy.example/photos/v1/sessions/s%201 Bearer tok-1',
      'GET https://proxy.example/photos/v1/mediaItems?sessionId=s+1&pageSize=100 Bearer tok-1',
      'GET https://proxy.example/photos/v1/mediaItems?sessionId=s+1&pageSize=100&pageToken=n2 Bearer tok-1',
      'DELETE https://proxy.example/photos/v1/sessions/s%201 Bearer tok-1',
    ]);
    expect(h.added).toMatchObject([
      {
        name: 'IMG.jpg',
        type: 'image/jpeg',
        source: 'google-photos-picker',
        meta: { googlePhotosFileType: 'PHOTO' },
        remote: {
          url: 'http://c.test/google-picker/get',
          body: {
            platform: 'photos',
            fileId: 'm1',
            accessToken: 'tok-1',
            url: 'https://lh3.example/p=d',
            sessionId: 's 1',
          },
        },
      },
      { name: 'VID.mp4', remote: { body: { fileId: 'm2', url: 'https://lh3.example/v=dv' } } },
    ]);
    expect(picker.getState()).toEqual({ status: 'idle', error: null, pickerUri: null });
  });

  it('a session that runs out before anything was picked is an error; cancel stops the polling', async () => {
    const env = fakeEnv(null);
    const api = fakePhotos(1000, '5s');
    const h = host();
    const deps = { companionUrl: 'http://c.test', env, fetch: api.fetch };
    const picker = new GooglePicker('photos', 'Google Photos Picker', { clientId: 'cid' }, h.host, deps);
    const done = picker.pick();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await done).toBe(0);
    expect(picker.getState()).toMatchObject({ status: 'error', error: 'pickerTimedOut', pickerUri: null });

    const again = picker.pick();
    await vi.advanceTimersByTimeAsync(2000);
    const polled = api.calls.length;
    picker.cancel();
    expect(await again).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(api.calls).toHaveLength(polled);
    expect(picker.getState()).toMatchObject({ status: 'idle', pickerUri: null });
  });
});

describe('pickers in discovery and upload', () => {
  const listed = async () =>
    new Response(
      JSON.stringify({
        providers: [
          { id: 'drive', name: 'Google Drive' },
          { id: 'google-drive-picker', name: 'Google Drive Picker', picker: true },
          { id: 'google-photos-picker', name: 'Google Photos Picker', picker: true },
          { id: 'some-future-picker', name: 'Future', picker: true },
        ],
      }),
    );
  const engine = (googlePicker?: { clientId: string; apiKey?: string; appId?: string }) =>
    new Ferry({
      companionUrl: 'http://c.test',
      online: { isOnline: () => true },
      providerOptions: { fetch: listed as typeof fetch, ...(googlePicker ? { googlePicker } : {}) },
    });

  it('lists a picker only when the page has what it needs (Drive: key and app id too); unknown pickers never', async () => {
    const ids = async (f: Ferry) => (await f.providers.discover()).map((p) => [p.id, p.picker ?? null]);
    expect(await ids(engine())).toEqual([['drive', null]]);
    expect(await ids(engine({ clientId: 'cid' }))).toEqual([
      ['drive', null],
      ['google-photos-picker', 'photos'],
    ]);
    expect(await ids(engine(options))).toEqual([
      ['drive', null],
      ['google-drive-picker', 'drive'],
      ['google-photos-picker', 'photos'],
    ]);
    expect(() => engine().providers.picker('google-drive-picker')).toThrow(/googlePicker/);
    expect(engine(options).providers.picker('google-drive-picker').kind).toBe('drive');
  });

  it("the remote uploader takes a file's route only on the file's own companion", () => {
    expect(routeOn('http://c.test', 'http://c.test/google-picker/get')).toBe('/google-picker/get');
    expect(routeOn('http://c.test', 'http://evil.test/google-picker/get')).toBeNull();
    expect(routeOn('http://c.test', 'http://c.test.evil/x')).toBeNull();
    expect(routeOn('http://c.test', undefined)).toBeNull();
    expect(seconds('1.5s', 5)).toBe(1.5);
    expect(seconds(undefined, 5)).toBe(5);
  });
});
