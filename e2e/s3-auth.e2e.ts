/**
 * The optional bearer-token hook (`--s3-auth-secret`) end to end: @ferry/core in Chromium sends
 * the host application's token with `headers`, uploads without one are refused with a clear
 * message, and another subject's token cannot touch the upload (403).
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildCorePage, patternBytes, sha256Of } from './support/core-page.ts';
import { type S3Stack, startS3Stack } from './support/s3-stack.ts';

const SECRET = 'e2e-host-app-secret';
let page: { dir: string; remove(): Promise<void> };
let stack: S3Stack;

/** What the host application does: base64url(payload) "." base64url(HMAC-SHA256(secret, that)). */
function token(sub: string, ttlSeconds = 600): string {
  const body = Buffer.from(JSON.stringify({ sub, exp: Math.floor(Date.now() / 1000) + ttlSeconds })).toString(
    'base64url',
  );
  const mac = createHmac('sha256', SECRET).update(body).digest('base64url');
  return `${body}.${mac}`;
}

beforeAll(async () => {
  page = await buildCorePage();
  stack = await startS3Stack(page.dir, ['--s3-auth-secret', SECRET]);
});

afterAll(async () => {
  await stack?.stop();
  await page?.remove();
});

async function upload(bearer: string | null, seed: number) {
  const p = await stack.open();
  const out = await p.evaluate(
    async ({ bearer, seed }) => {
      const { Ferry, S3MultipartUploader } = window.core;
      const headers = (): Record<string, string> => (bearer ? { Authorization: `Bearer ${bearer}` } : {});
      const engine = new Ferry({ uploader: new S3MultipartUploader({ companionUrl: '', headers }) });
      const id = engine.addFile({ data: window.patternFile('auth.bin', 6 * 1024 * 1024, seed) });
      await engine.upload();
      const file = id ? engine.getFile(id) : undefined;
      return {
        state: file?.state,
        error: file?.error?.message,
        key: file?.s3Multipart?.key ?? '',
        uploadId: file?.s3Multipart?.uploadId ?? '',
      };
    },
    { bearer, seed },
  );
  await p.close();
  return out;
}

test('without a token the upload is refused with the server message', async () => {
  const out = await upload(null, 61);
  expect(out.state).toBe('error');
  expect(out.error).toBe('Failed because: a bearer token is required');
});

test("with the host app's token the upload completes, and another subject cannot touch it", async () => {
  const alice = token('alice');
  const out = await upload(alice, 62);
  expect(out.state).toBe('complete');
  expect(out.key).toMatch(/^uploads\/[0-9a-f]{16}\/[0-9a-f]{32}-auth\.bin$/);
  const stored = await stack.garage.getObject(out.key);
  expect(sha256Of(stored ?? new Uint8Array())).toBe(sha256Of(patternBytes(6 * 1024 * 1024, 62)));

  const list = `${stack.ferry.url}/s3/multipart/${encodeURIComponent(out.uploadId)}?key=${encodeURIComponent(out.key)}`;
  const asBob = await fetch(list, { headers: { Authorization: `Bearer ${token('bob')}` } });
  expect(asBob.status).toBe(403);
  expect(await asBob.json()).toEqual({ message: 'this upload belongs to someone else' });
  const expired = await fetch(list, { headers: { Authorization: `Bearer ${token('alice', -10)}` } });
  expect(expired.status).toBe(401);
  expect(await expired.json()).toEqual({ message: 'token expired' });
});
