/**
 * Transloadit's own Node SDK (`transloadit` 4.7.4) against ferry's Assembly API, unchanged but
 * for its endpoint: it creates an Assembly with its own id, uploads a file through ferry's tus
 * endpoint, awaits completion by polling, cancels, meets signature errors, and finds an Assembly
 * again after ferry restarts. `validateResponses` makes the SDK check every status against its
 * schema.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, Transloadit } from 'transloadit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type RunningFerry, sha256, startFerry } from './support/ferry.ts';

const KEY = 'e2e-key';
const SECRET = 'e2e-secret';
const flags = ['--no-ui', '--assembly-key', KEY, '--assembly-secret', SECRET];
let ferry: RunningFerry;
let work: string;

beforeAll(async () => {
  ferry = await startFerry(flags);
  work = await mkdtemp(join(tmpdir(), 'ferry-sdk-'));
});

afterAll(async () => {
  await ferry?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

function client(secret = SECRET): Transloadit {
  return new Transloadit({ authKey: KEY, authSecret: secret, endpoint: ferry.url, validateResponses: true });
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: an Assembly variable, which the server expands
const nonEmpty: [string, string, string] = ['${file.size}', '>', '0'];
const steps = {
  ':original': { robot: '/upload/handle' as const },
  kept: { robot: '/file/filter' as const, use: ':original', accepts: [nonEmpty], result: true },
};

test('creates an Assembly, uploads a file through tus and awaits its results', async () => {
  const bytes = randomBytes(300_000);
  const path = join(work, 'photo.bin');
  await writeFile(path, bytes);
  const status = await client().createAssembly({
    params: { steps, fields: { owner: 'e2e' } },
    files: { file1: path },
    waitForCompletion: true,
  });
  expect(status.ok).toBe('ASSEMBLY_COMPLETED');
  expect(status.assembly_id).toMatch(/^[0-9a-f]{32}$/);
  expect(status.fields).toEqual({ owner: 'e2e' });
  const upload = status.uploads?.[0];
  expect(upload?.field).toBe('file1');
  expect(upload?.name).toBe('photo.bin');
  expect(upload?.size).toBe(bytes.length);
  expect(upload?.tus_upload_url).toMatch(new RegExp(`^${ferry.url}/files/[0-9a-f]{32}$`));
  const result = status.results?.kept?.[0];
  expect(result?.original_id).toBe(upload?.id);
  const res = await fetch(String(result?.ssl_url));
  expect(res.status).toBe(200);
  expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(bytes));
});

test('cancels an Assembly that waits for its uploads', async () => {
  const sdk = client();
  const created = await sdk.createAssembly({ params: { steps }, expectedUploads: 1 });
  expect(created.ok).toBe('ASSEMBLY_UPLOADING');
  const canceled = await sdk.cancelAssembly(String(created.assembly_id));
  expect(canceled.ok).toBe('ASSEMBLY_CANCELED');
  const after = await sdk.getAssembly(String(created.assembly_id));
  expect(after.ok).toBe('ASSEMBLY_CANCELED');
});

test('a wrong secret or an expired signature is refused with the documented code', async () => {
  const wrong = client('not-the-secret').createAssembly({ params: { steps } });
  await expect(wrong).rejects.toBeInstanceOf(ApiError);
  await expect(wrong).rejects.toMatchObject({ code: 'INVALID_SIGNATURE' });
  const expired = client().createAssembly({
    params: { steps, auth: { key: KEY, expires: new Date(Date.now() - 60_000).toISOString() } },
  });
  await expect(expired).rejects.toMatchObject({ code: 'AUTH_EXPIRED' });
});

test('an Assembly is found again after ferry restarts', async () => {
  const first = await startFerry(flags, { keepData: true });
  try {
    const sdk = new Transloadit({ authKey: KEY, authSecret: SECRET, endpoint: first.url });
    const created = await sdk.createAssembly({ params: { steps }, expectedUploads: 2 });
    await first.stop();
    const second = await startFerry(flags, { dataDir: first.dataDir });
    try {
      const again = new Transloadit({ authKey: KEY, authSecret: SECRET, endpoint: second.url });
      const status = await again.getAssembly(String(created.assembly_id));
      expect(status.ok).toBe('ASSEMBLY_UPLOADING');
      expect(status.assembly_id).toBe(created.assembly_id);
      expect(status.expected_tus_uploads).toBe(2);
    } finally {
      await second.stop();
    }
  } finally {
    await rm(first.dataDir, { recursive: true, force: true });
  }
});
