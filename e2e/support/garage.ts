/**
 * A real single-node Garage (S3-compatible store) on loopback for e2e specs: the twin of
 * `crates/ferry-testkit/src/garage.rs`. Temporary data directory, free ports, one key, one bucket,
 * plus the few signed S3 calls specs need (bucket CORS, reading an object back, listing
 * multipart uploads). The binary comes from `GARAGE_BIN` or the cache `scripts/ensure-garage.sh`
 * fills.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const garageBin = process.env.GARAGE_BIN ?? join(homedir(), '.cache/ferry/garage-2.5.0/bin/garage');

export interface RunningGarage {
  /** `http://127.0.0.1:PORT` of the S3 API. */
  endpoint: string;
  region: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** A signed S3 request against the bucket (path style); `path` is the part after the bucket. */
  s3(
    method: string,
    path: string,
    query?: Record<string, string>,
    body?: string | Uint8Array,
    headers?: Record<string, string>,
  ): Promise<Response>;
  /** Sets the bucket's CORS for `origins`, exposing `expose` (`[]` hides ETag from browsers). */
  setCors(origins: string[], expose: string[]): Promise<void>;
  /** The stored bytes at `key`, or null when there is no such object. */
  getObject(key: string): Promise<Uint8Array | null>;
  /** Upload ids of the bucket's in-progress multipart uploads. */
  listMultipartUploads(): Promise<string[]>;
  /** Kills the server (by PID) and removes its directory. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const enc = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export async function startGarage(): Promise<RunningGarage> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-garage-'));
  const [rpc, s3, admin] = [await freePort(), await freePort(), await freePort()];
  const region = 'garage';
  const config = join(dir, 'garage.toml');
  await writeFile(
    config,
    [
      `metadata_dir = "${join(dir, 'meta')}"`,
      `data_dir = "${join(dir, 'data')}"`,
      'db_engine = "sqlite"',
      'replication_factor = 1',
      `rpc_bind_addr = "127.0.0.1:${rpc}"`,
      `rpc_public_addr = "127.0.0.1:${rpc}"`,
      `rpc_secret = "${hex(32)}"`,
      '[s3_api]',
      `s3_region = "${region}"`,
      `api_bind_addr = "127.0.0.1:${s3}"`,
      '[admin]',
      `api_bind_addr = "127.0.0.1:${admin}"`,
      `admin_token = "${hex(16)}"`,
      '',
    ].join('\n'),
  );
  const log = await open(join(dir, 'garage.log'), 'w');
  const child: ChildProcess = spawn(garageBin, ['-c', config, 'server'], {
    stdio: ['ignore', 'ignore', log.fd],
    env: { ...process.env, RUST_LOG: 'warn' },
  });
  const cli = async (...args: string[]) => (await run(garageBin, ['-c', config, ...args])).stdout;

  const endpoint = `http://127.0.0.1:${s3}`;
  const accessKey = `GK${hex(12)}`;
  const secretKey = hex(32);
  const bucket = `ferry-${hex(4)}`;

  async function s3Request(
    method: string,
    path: string,
    query: Record<string, string> = {},
    body: string | Uint8Array = '',
    extraHeaders: Record<string, string> = {},
  ): Promise<Response> {
    const now = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const day = now.slice(0, 8);
    const canonicalPath = `/${bucket}${path.split('/').map(enc).join('/')}`;
    const canonicalQuery = Object.keys(query)
      .sort()
      .map((k) => `${enc(k)}=${enc(query[k] ?? '')}`)
      .join('&');
    const payloadHash = sha256Hex(body);
    const headers: Record<string, string> = {
      host: `127.0.0.1:${s3}`,
      'x-amz-content-sha256': payloadHash,
      'x-amz-date': now,
      ...Object.fromEntries(Object.entries(extraHeaders).map(([k, v]) => [k.toLowerCase(), v])),
    };
    const names = Object.keys(headers).sort();
    const canonical = [
      method,
      canonicalPath,
      canonicalQuery,
      names.map((n) => `${n}:${headers[n]}\n`).join(''),
      names.join(';'),
      payloadHash,
    ].join('\n');
    const scope = `${day}/${region}/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', now, scope, sha256Hex(canonical)].join('\n');
    const kSigning = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, day), region), 's3'), 'aws4_request');
    const signature = createHmac('sha256', kSigning).update(toSign).digest('hex');
    const { host: _host, ...sent } = headers;
    return fetch(`${endpoint}${canonicalPath}${canonicalQuery ? `?${canonicalQuery}` : ''}`, {
      method,
      headers: {
        ...sent,
        authorization: `AWS4-HMAC-SHA256 Credential=${accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
      },
      body: method === 'GET' || method === 'HEAD' ? undefined : typeof body === 'string' ? body : Buffer.from(body),
    });
  }

  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) {
      const exited = new Promise((ok) => child.once('exit', ok));
      process.kill(child.pid, 'SIGKILL');
      await exited;
    }
    await log.close();
    await rm(dir, { recursive: true, force: true });
  };

  try {
    let nodeId = '';
    for (let i = 0; i < 200 && !nodeId; i++) {
      if (child.exitCode !== null) throw new Error(`garage exited with ${child.exitCode}`);
      try {
        const id = (await cli('node', 'id', '-q')).trim().split('@')[0] ?? '';
        // `node id` can answer from the key on disk before RPC listens: wait for `status`.
        await cli('status');
        nodeId = id;
      } catch {
        await new Promise((ok) => setTimeout(ok, 50));
      }
    }
    if (!nodeId) throw new Error('garage did not answer `node id` in 10 s');
    await cli('layout', 'assign', '-z', 'dc1', '-c', '1G', nodeId);
    await cli('layout', 'apply', '--version', '1');
    await cli('key', 'import', '--yes', '-n', 'ferry-test', accessKey, secretKey);
    await cli('bucket', 'create', bucket);
    await cli('bucket', 'allow', '--read', '--write', '--owner', bucket, '--key', 'ferry-test');
    let ready = false;
    for (let i = 0; i < 200 && !ready; i++) {
      ready = await s3Request('HEAD', '/').then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((ok) => setTimeout(ok, 50));
    }
    if (!ready) throw new Error('Garage S3 API did not accept the bucket in 10 s');
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    endpoint,
    region,
    accessKey,
    secretKey,
    bucket,
    s3: s3Request,
    async setCors(origins, expose) {
      const rule = [
        ...origins.map((o) => `<AllowedOrigin>${o}</AllowedOrigin>`),
        ...['GET', 'PUT', 'POST', 'DELETE', 'HEAD'].map((m) => `<AllowedMethod>${m}</AllowedMethod>`),
        '<AllowedHeader>*</AllowedHeader>',
        ...expose.map((h) => `<ExposeHeader>${h}</ExposeHeader>`),
        '<MaxAgeSeconds>60</MaxAgeSeconds>',
      ].join('');
      const body = `<CORSConfiguration><CORSRule>${rule}</CORSRule></CORSConfiguration>`;
      const md5 = createHash('md5').update(body).digest('base64');
      const resp = await s3Request('PUT', '/', { cors: '' }, body, { 'content-md5': md5 });
      if (!resp.ok) throw new Error(`PutBucketCors: ${resp.status} ${await resp.text()}`);
    },
    async getObject(key) {
      const resp = await s3Request('GET', `/${key}`);
      if (resp.status === 404) return null;
      if (!resp.ok) throw new Error(`GetObject ${key}: ${resp.status}`);
      return new Uint8Array(await resp.arrayBuffer());
    },
    async listMultipartUploads() {
      const resp = await s3Request('GET', '/', { uploads: '' });
      if (!resp.ok) throw new Error(`ListMultipartUploads: ${resp.status}`);
      const xml = await resp.text();
      return [...xml.matchAll(/<UploadId>([^<]*)<\/UploadId>/g)].map((m) => m[1] ?? '');
    },
    stop,
  };
}
