// Times a 1 GiB multipart upload from headless Chromium straight to a local Garage bucket, signed
// by `ferry`: @ferry/core's S3MultipartUploader vs Uppy's @uppy/aws-s3 vs `bare`, the browser's
// floor (a page with no library: page/bare.js), alternating, BENCH_REPS times each (default 2),
// for each emulated round-trip latency in BENCH_LATENCIES_MS (default "0,40": raw loopback, then DevTools' added latency per request, as between a browser and a
// remote bucket). Prints one JSON line per run; each object's stored size is checked. On raw
// loopback each repetition also runs the floor, `native`: Garage's own ingest of the same file
// with boto3 at the same part size and parts in flight (native.py, run with BENCH_PYTHON).
// Each line also has `cpu`: CPU seconds by process role over the run (cpu.ts), and with
// BENCH_PROFILE=1 `main`: the page's main-thread task and script time (DevTools' Performance
// metrics), to say whether a distance is the page's JavaScript or the browser's upload path.
// BENCH_DRIVER=cdp drives the browser peers over a bare DevTools pipe instead of Playwright.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startS3Stack } from '../../e2e/support/s3-stack.ts';
import { type CdpBrowser, launchCdpBrowser } from '../support/cdp.ts';
import { type CpuSample, cpuBetween, sampleCpu } from './cpu.ts';

const size = Number(process.env.BENCH_SIZE ?? 1024 * 1024 * 1024);
const reps = Number(process.env.BENCH_REPS ?? 2);
const latencies = (process.env.BENCH_LATENCIES_MS ?? '0,40').split(',').map(Number);
// Browser peers; `ferry-at` is another commit's engine (run.sh's BENCH_FERRY_AT) on the same page.
const profile = process.env.BENCH_PROFILE === '1';
const browserPeers = (process.env.BENCH_PEERS ?? 'ferry,uppy,bare').split(',');
const pageDir = process.argv[2];
const nativeScript = process.argv[3];
const python = process.env.BENCH_PYTHON;
if (!pageDir || !nativeScript || !python)
  throw new Error(
    'usage: BENCH_PYTHON=... measure.ts PAGE_DIR NATIVE_PY (bench/s3/run.sh builds the page, bundles this and runs it)',
  );

type Bench = Record<string, (query?: string) => Promise<{ ms: number; key: string }>>;

// A file on disk, picked through the page's file input: Chromium then reads it from disk as it
// would a user's file (a 1 GiB in-memory Blob breaks Chromium's blob store: ERR_BLOB_REFERENCED_BLOB_BROKEN).
const dir = await mkdtemp(join(tmpdir(), 'ferry-bench-s3-'));
const input = join(dir, 'bench.bin');
const handle = await open(input, 'w');
for (let left = size; left > 0; left -= 16 * 1024 * 1024)
  await handle.write(randomBytes(Math.min(left, 16 * 1024 * 1024)));
await handle.close();

const stack = await startS3Stack(pageDir);

/** Garage's own ingest of the file (the floor): boto3, same part size and parts in flight. */
async function native(rep: number): Promise<{ ms: number; cpu: number; key: string }> {
  const key = `native/bench-${rep}.bin`;
  const { garage } = stack;
  const { stdout } = await promisify(execFile)(python as string, [
    nativeScript as string,
    garage.endpoint,
    garage.region,
    garage.accessKey,
    garage.secretKey,
    garage.bucket,
    key,
    input,
  ]);
  const out = JSON.parse(stdout) as { ms: number; cpu: number };
  return { ms: out.ms, cpu: out.cpu, key };
}

/** Removes the stored object after checking its size. */
async function check(peer: string, key: string) {
  const head = await stack.garage.s3('HEAD', `/${key}`);
  const stored = Number(head.headers.get('content-length'));
  if (stored !== size) throw new Error(`${peer}: stored ${stored} bytes, sent ${size}`);
  await stack.garage.s3('DELETE', `/${key}`);
}

function report(
  peer: string,
  latency: number,
  rep: number,
  ms: number,
  cpu: [CpuSample, CpuSample, { python?: number }?],
  main?: Record<string, number>,
) {
  const mbps = size / 1e6 / (ms / 1000);
  const line = { peer, latency, rep, bytes: size, ms: Math.round(ms), mbps: Number(mbps.toFixed(1)) };
  console.log(JSON.stringify({ ...line, cpu: cpuBetween(...cpu), ...(main ? { main } : {}) }));
}

/** A browser peer's page, however it is driven. */
interface Tab {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  run(peer: string): Promise<{ ms: number; key: string }>;
  close(): Promise<void>;
}

/** Runs in the page: `ferry?limit=10` is the peer `ferry` with those options (see page/main.js). */
function runPeer(peer: string): Promise<{ ms: number; key: string }> {
  const [name, query] = peer.split('?');
  const run = (window as unknown as { bench: Bench }).bench[name ?? ''];
  if (!run) throw new Error(`no bench for ${peer}`);
  return run(query);
}

async function openPlaywright(): Promise<Tab> {
  const page = await stack.open();
  // Why a request failed, when one does (printed on stderr, not part of the figures).
  page.on('requestfailed', (r) =>
    console.error(`request failed: ${r.method()} ${r.url().slice(0, 120)} ${r.failure()?.errorText}`),
  );
  const cdp = await stack.browser.context.newCDPSession(page);
  await page.setInputFiles('#file', input);
  return {
    send: (method, params) => cdp.send(method as 'Performance.enable', params as never) as never,
    run: (peer) => page.evaluate(runPeer, peer),
    close: () => page.close(),
  };
}

async function openCdp(browser: CdpBrowser): Promise<Tab> {
  const tab = await browser.open(`${stack.ferry.url}/`);
  await tab.waitFor('window.ready === true');
  await tab.setInputFiles('#file', [input]);
  return {
    send: (method, params) => tab.send(method, params),
    run: (peer) => tab.evaluate(`(${runPeer.toString()})(${JSON.stringify(peer)})`),
    close: () => tab.close(),
  };
}

// BENCH_DRIVER=cdp: the browser peers run in a Chromium driven over a bare DevTools pipe
// (bench/support/cdp.ts), without the Network domain Playwright keeps on in every page.
const cdpBrowser = process.env.BENCH_DRIVER === 'cdp' ? await launchCdpBrowser({ network: false }) : undefined;

try {
  for (const latency of latencies) {
    for (let rep = 1; rep <= reps; rep += 1) {
      const all = ['native', ...browserPeers];
      const order = rep % 2 ? all : [...all].reverse();
      for (const peer of order.filter((p) => p !== 'native' || latency === 0)) {
        if (peer === 'native') {
          const before = await sampleCpu();
          const out = await native(rep);
          const after = await sampleCpu();
          await check(peer, out.key);
          report(peer, latency, rep, out.ms, [before, after, { python: out.cpu }]);
          continue;
        }
        const tab = cdpBrowser ? await openCdp(cdpBrowser) : await openPlaywright();
        if (latency > 0) {
          await tab.send('Network.enable');
          await tab.send('Network.emulateNetworkConditions', {
            offline: false,
            latency,
            downloadThroughput: -1,
            uploadThroughput: -1,
          });
        }
        if (profile) await tab.send('Performance.enable');
        const metrics = async () => {
          if (!profile) return {};
          const { metrics: all } = (await tab.send('Performance.getMetrics')) as {
            metrics: { name: string; value: number }[];
          };
          return Object.fromEntries(all.map((m) => [m.name, m.value]));
        };
        const m0 = await metrics();
        const before = await sampleCpu();
        const out = await tab.run(peer);
        // Sampled before the page closes: its renderer's time goes with the process.
        const after = await sampleCpu();
        const m1 = await metrics();
        const main = profile
          ? Object.fromEntries(
              ['TaskDuration', 'ScriptDuration', 'LayoutDuration'].map((k) => [
                k,
                Math.round(((m1[k] ?? 0) - (m0[k] ?? 0)) * 1000),
              ]),
            )
          : undefined;
        await tab.close();
        await check(peer, out.key);
        report(peer, latency, rep, out.ms, [before, after], main);
      }
    }
  }
} finally {
  await cdpBrowser?.close();
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
