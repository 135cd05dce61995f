/**
 * A real single-node Garage (S3-compatible store) on loopback for e2e specs, started by the Rust
 * launcher `ferry-garage` (the testkit's own bootstrap, so it exists once), plus the few signed S3
 * calls specs need (bucket CORS, reading an object back, listing multipart uploads). The Garage
 * binary comes from `GARAGE_BIN` or the cache `scripts/ensure-garage.sh` fills.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './ferry.ts';

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

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const enc = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The launcher: `crates/ferry-testkit/src/bin/ferry-garage.rs`, built by `make e2e`. */
export const launcherBin = process.env.FERRY_GARAGE_BIN ?? join(repoRoot, 'target', 'debug', 'ferry-garage');

/**
 * Starts Garage through the Rust launcher (one bootstrap for Rust tests and e2e specs), which
 * prints the connection as JSON and stops the node when its stdin closes.
 */
export async function startGarage(): Promise<RunningGarage> {
  const child: ChildProcess = spawn(launcherBin, [], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, GARAGE_BIN: garageBin },
  });
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const stop = async () => {
    child.stdin?.end();
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const line = await new Promise<string>((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('ferry-garage did not start Garage in 60 s')), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        ok(out.slice(0, end));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`ferry-garage exited with ${code} (is ${launcherBin} built? make e2e builds it)`));
    });
  });
  const parsed = JSON.parse(line) as Partial<
    Record<'endpoint' | 'region' | 'accessKey' | 'secretKey' | 'bucket', string>
  >;
  const [endpoint, region, accessKey, secretKey, bucket] = (
    ['endpoint', 'region', 'accessKey', 'secretKey', 'bucket'] as const
  ).map((name) => parsed[name] ?? '') as [string, string, string, string, string];
  if (!endpoint || !region || !accessKey || !secretKey || !bucket) {
    await stop();
    throw new Error(`ferry-garage printed an unexpected line: ${line}`);
  }

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
      host: new URL(endpoint).host,
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
