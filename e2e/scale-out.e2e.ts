/**
 * Two `ferry` instances behind a round-robin haproxy front, no stickiness, sharing one Redis and
 * one Garage bucket (`--store s3 --redis-url`). The Dashboard, opened through the front, uploads
 * picked files with tus (creation, PATCHes and HEADs land on either instance) and imports a link
 * (its `/url/get`, its progress socket and the companion's own tus upload land on either
 * instance too). Every file is read back through the front and compared by sha256.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { sha256, statusText } from './support/dashboard.ts';
import { type RunningFerry, startFerry } from './support/ferry.ts';
import { type RunningGarage, startGarage } from './support/garage.ts';

const MiB = 1024 * 1024;
let garage: RunningGarage;
let redis: ChildProcess;
let haproxy: ChildProcess;
let front = '';
const instances: RunningFerry[] = [];
let origin: Server;
let originUrl = '';
let browser: Browser;
let page: Page;
let work = '';
const linked = randomBytes(9 * MiB + 17);

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = netServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => ok(port));
    });
  });
}

/** Resolves once `url` answers (any status), or fails after 10 s. */
async function answering(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }
}

function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  process.kill(child.pid, 'SIGTERM');
  return exited;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ferry-scale-e2e-'));
  garage = await startGarage();
  const redisPort = await freePort();
  redis = spawn(
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const frontPort = await freePort();
  front = `http://127.0.0.1:${frontPort}`;
  origin = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': linked.length });
    res.end(req.method === 'HEAD' ? undefined : linked);
  });
  await new Promise<void>((ok) => origin.listen(0, '127.0.0.1', ok));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/linked.bin`;
  for (let i = 0; i < 2; i++) {
    instances.push(
      await startFerry([
        '--store',
        's3',
        '--s3-endpoint',
        garage.endpoint,
        '--s3-bucket',
        garage.bucket,
        '--s3-region',
        garage.region,
        '--s3-access-key',
        garage.accessKey,
        '--s3-secret-key',
        garage.secretKey,
        '--s3-force-path-style',
        '--redis-url',
        `redis://127.0.0.1:${redisPort}/`,
        // The page and the companion's own destination are the front's address.
        '--public-url',
        front,
        '--allow-local-urls',
      ]),
    );
  }
  const config = [
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout tunnel 10m',
    'frontend front',
    `  bind 127.0.0.1:${frontPort}`,
    '  default_backend fleet',
    'backend fleet',
    '  balance roundrobin',
    ...instances.map((f, i) => `  server f${i} ${new URL(f.url).host}`),
  ].join('\n');
  const configPath = join(work, 'haproxy.cfg');
  await writeFile(configPath, `${config}\n`);
  haproxy = spawn(process.env.HAPROXY_BIN ?? 'haproxy', ['-f', configPath, '-db'], { stdio: 'ignore' });
  await answering(`${front}/health`);
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`${front}/`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopProcess(haproxy);
  for (const f of instances) await f.stop();
  await stopProcess(redis);
  await garage?.stop();
  await new Promise((ok) => origin?.close(ok));
  if (work) await rm(work, { recursive: true, force: true });
});

/** The stored bytes of the upload at `url`, read through the front. */
async function storedSha(url: string): Promise<string> {
  const res = await fetch(new URL(url, front));
  expect(res.status).toBe(200);
  return sha256(new Uint8Array(await res.arrayBuffer()));
}

test('the Dashboard uploads and imports through a round-robin front over two instances, byte-exact', async () => {
  const picked = [
    { name: 'eleven-mib.bin', bytes: randomBytes(11 * MiB + 3) },
    { name: 'small.bin', bytes: randomBytes(40 * 1024) },
  ];
  for (const f of picked) await writeFile(join(work, f.name), f.bytes);
  await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(picked.map((f) => join(work, f.name)));
  await page.getByRole('button', { name: 'Link' }).click();
  await page.getByRole('textbox', { name: 'File URL' }).fill(originUrl);
  await page.getByRole('button', { name: 'Import' }).click();
  await expect.poll(() => page.getByTestId('ferry-file').count()).toBe(3);

  await page.getByRole('button', { name: /^Upload 3 files$/ }).click();
  await expect.poll(() => statusText(page), { timeout: 90_000 }).toBe('Complete');
  const files = await page.evaluate(
    () => window.ferry?.getFiles().map((f) => ({ name: f.name, url: f.uploadURL ?? '', remote: f.isRemote })) ?? [],
  );
  expect(files).toHaveLength(3);
  const expected = new Map([...picked.map((f) => [f.name, f.bytes] as const), ['linked.bin', linked] as const]);
  for (const f of files) {
    const bytes = expected.get(f.name);
    expect(bytes, `an expected file: ${f.name}`).toBeDefined();
    expect(f.url, `${f.name} has its upload URL`).toMatch(/\/files\//);
    expect(await storedSha(f.url), f.name).toBe(sha256(bytes as Uint8Array));
  }
  expect(files.filter((f) => f.remote).map((f) => f.name)).toEqual(['linked.bin']);

  // Both instances are still in the fleet (each reaches Redis).
  for (const f of instances) {
    const metrics = await (await fetch(`${f.url}/metrics`)).text();
    expect(metrics).toMatch(/ferry_cluster_redis_reachable\{instance="[^"]+"\} 1/);
  }
}, 150_000);
