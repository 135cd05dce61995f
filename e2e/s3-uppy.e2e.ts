/**
 * Compatibility: Uppy's own `@uppy/core` + `@uppy/aws-s3` (from npm) in real Chromium, signing
 * through `ferry`'s `/s3/*` routes and storing into a real Garage bucket, single and multipart.
 * The stored objects are read back and compared by sha256.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { patternBytes, sha256Of } from './support/core-page.ts';
import { type S3Stack, startS3Stack } from './support/s3-stack.ts';

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: Uppy's classes are driven from page scripts
    Uppy: any;
    // biome-ignore lint/suspicious/noExplicitAny: see above
    AwsS3: any;
  }
}

const MiB = 1024 * 1024;
let dir: string;
let stack: S3Stack;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-uppy-page-'));
  await build({
    root: resolve(import.meta.dirname, 'pages', 's3-uppy'),
    logLevel: 'error',
    configFile: false,
    build: { outDir: dir, emptyOutDir: true, minify: false },
  });
  stack = await startS3Stack(dir);
});

afterAll(async () => {
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

test.each([
  { name: 'single', size: 2 * MiB + 3, multipart: false, seed: 51 },
  { name: 'multipart', size: 17 * MiB + 1, multipart: true, seed: 52 },
])('@uppy/aws-s3 $name upload through ferry lands in the bucket', async ({ name, size, multipart, seed }) => {
  const p = await stack.open();
  const out = await p.evaluate(
    async ({ name, size, multipart, seed }) => {
      const uppy = new window.Uppy({ autoProceed: false });
      uppy.use(window.AwsS3, { companionEndpoint: location.origin, shouldUseMultipart: multipart });
      uppy.addFile({
        name: `uppy ${name}.bin`,
        type: 'application/octet-stream',
        data: window.patternFile(name, size, seed),
      });
      const result = await uppy.upload();
      const file = result.successful?.[0];
      return {
        ok: result.successful?.length ?? 0,
        failed: (result.failed ?? []).map((f: { error?: unknown }) => String(f.error)),
        key: file?.response?.body?.key as string | undefined,
        url: file?.uploadURL as string | undefined,
      };
    },
    { name, size, multipart, seed },
  );
  expect(out.failed).toEqual([]);
  expect(out.ok).toBe(1);
  expect(out.key).toMatch(new RegExp(`^uploads/[0-9a-f]{32}-uppy_${name}\\.bin$`));
  const stored = await stack.garage.getObject(out.key ?? '');
  expect(stored?.length).toBe(size);
  expect(sha256Of(stored ?? new Uint8Array())).toBe(sha256Of(patternBytes(size, seed)));
  await p.close();
});
