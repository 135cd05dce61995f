/**
 * A small tus 1.0 server on loopback for the uploader's tests (creation, creation-with-upload,
 * HEAD, PATCH, termination; it refuses any request that breaks the protocol), and the files,
 * contexts and digests those tests share. `loopbackTusServer()` registers the calling file's
 * hooks: one server for the file, a fresh store and log before each test.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { defaultLocale, translate } from '../locale.ts';
import type { FerryFile } from '../types.ts';
import type { AbortReason, UploadContext } from '../uploader.ts';
import { TusUploader } from '../uploaders/tus.ts';

export interface Stored {
  length: number;
  metadata: Record<string, string>;
  bytes: Buffer;
}

/** What a test reads and sets on the server; reset before each test. */
export interface LoopbackTus {
  base: string;
  uploads: Map<string, Stored>;
  /** `METHOD PATH STATUS` of every answered request. */
  log: string[];
  /** `METHOD Authorization` of every answered request. */
  authorizations: string[];
  /** When set, PATCH answers 423 (another request holds the upload). */
  locked: boolean;
  /** When set, creation is refused with this answer (as a pre-create hook would). */
  refusal: { status: number; body: string; type: string } | undefined;
}

/** Starts the server for the calling test file and resets it before each test. */
export function loopbackTusServer(): LoopbackTus {
  const server: LoopbackTus = {
    base: '',
    uploads: new Map(),
    log: [],
    authorizations: [],
    locked: false,
    refusal: undefined,
  };
  let http: Server;
  let next = 0;
  beforeAll(async () => {
    http = createServer((req, res) => {
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('access-control-allow-headers', '*');
      res.setHeader('access-control-allow-methods', '*');
      res.setHeader('access-control-expose-headers', 'Location, Upload-Offset, Upload-Length');
      if (req.method === 'OPTIONS') return void res.end();
      const path = new URL(req.url ?? '/', server.base).pathname;
      const answer = (status: number, headers: Record<string, string> = {}, body = '') => {
        server.log.push(`${req.method} ${path} ${status}`);
        server.authorizations.push(`${req.method} ${req.headers.authorization ?? '-'}`);
        res.writeHead(status, { 'tus-resumable': '1.0.0', ...headers }).end(body);
      };
      if (req.headers['tus-resumable'] !== '1.0.0') return answer(412);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const upload = server.uploads.get(path);
        if (req.method === 'POST' && path === '/files/' && server.refusal) {
          return answer(server.refusal.status, { 'content-type': server.refusal.type }, server.refusal.body);
        }
        if (req.method === 'POST' && path === '/files/') {
          const length = Number(req.headers['upload-length']);
          if (!Number.isInteger(length)) return answer(400);
          const metadata: Record<string, string> = {};
          for (const pair of String(req.headers['upload-metadata'] ?? '').split(',')) {
            const [key = '', value = ''] = pair.trim().split(' ');
            if (key) metadata[key] = Buffer.from(value, 'base64').toString('utf8');
          }
          next += 1;
          // creation-with-upload: the body, if any, is the upload's first bytes.
          const withData = req.headers['content-type'] === 'application/offset+octet-stream';
          const bytes = withData ? Buffer.concat(chunks) : Buffer.alloc(0);
          if (bytes.length > length) return answer(413);
          server.uploads.set(`/files/${next}`, { length, metadata, bytes });
          const headers: Record<string, string> = { location: `/files/${next}` };
          if (withData) headers['upload-offset'] = String(bytes.length);
          return answer(201, headers);
        }
        if (!upload) return answer(404);
        if (req.method === 'HEAD') {
          return answer(200, { 'upload-offset': String(upload.bytes.length), 'upload-length': String(upload.length) });
        }
        if (req.method === 'DELETE') {
          server.uploads.delete(path);
          return answer(204);
        }
        if (req.method !== 'PATCH') return answer(405);
        if (server.locked) return answer(423, {}, 'another request holds this upload');
        if (req.headers['content-type'] !== 'application/offset+octet-stream') return answer(415);
        if (Number(req.headers['upload-offset']) !== upload.bytes.length) return answer(409);
        upload.bytes = Buffer.concat([upload.bytes, ...chunks]);
        return answer(204, { 'upload-offset': String(upload.bytes.length) });
      });
    });
    await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
    server.base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => http.close(() => ok())));
  beforeEach(() => {
    server.authorizations = [];
    server.uploads = new Map();
    server.log = [];
    server.locked = false;
    server.refusal = undefined;
    next = 0;
    localStorage.clear();
  });
  return server;
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export function pattern(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 7 + (i >> 8)) & 255;
  return bytes;
}

export function localFile(bytes: Uint8Array<ArrayBuffer>, extra: Partial<FerryFile> = {}): FerryFile {
  return {
    id: 'f1',
    name: 'report.pdf',
    type: 'application/pdf',
    data: new File([bytes], 'report.pdf', { type: 'application/pdf' }),
    size: bytes.length,
    meta: { name: 'report.pdf', type: 'application/pdf', album: 'été' },
    ...extra,
  } as unknown as FerryFile;
}

/**
 * A context that records patches and progress; `stop` aborts with its reason once that many
 * bytes were reported (0: as soon as the upload URL is known). Loopback is too fast to abort
 * from outside the callbacks.
 */
export function context(stop?: { at: number; reason: AbortReason }) {
  const controller = new AbortController();
  let reason: AbortReason | undefined;
  const patches: unknown[] = [];
  const progress: number[] = [];
  const abort = (why: AbortReason) => {
    reason = why;
    controller.abort();
  };
  const check = () => {
    if (stop && !controller.signal.aborted && (progress.at(-1) ?? 0) >= stop.at) abort(stop.reason);
  };
  const ctx: UploadContext = {
    signal: controller.signal,
    onProgress: (sent) => {
      progress.push(sent);
      check();
    },
    patchFile: (patch) => {
      patches.push(patch);
      check();
    },
    reason: () => reason,
    isOnline: () => true,
    i18n: (key, vars) => translate(defaultLocale, key, vars),
  };
  return { ctx, patches, progress, abort };
}

/** An uploader on the create-then-PATCH path whatever the size (small files have their own tests). */
export const uploader = (base: string, chunkSize?: number) =>
  new TusUploader({
    endpoint: `${base}/files/`,
    resume: false,
    retryDelays: [],
    smallFileSize: 0,
    ...(chunkSize ? { chunkSize } : {}),
  });

/** tus-js-client's resume entries in the browser's storage. */
export const resumeEntries = () => Object.keys(localStorage).filter((key) => key.startsWith('tus::'));
