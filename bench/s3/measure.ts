// Times a 1 GiB multipart upload from headless Chromium straight to a local Garage bucket, signed
// by `ferry`: @ferry/core's S3MultipartUploader vs Uppy's @uppy/aws-s3, alternating, BENCH_REPS
// times each (default 2), for each emulated round-trip latency in BENCH_LATENCIES_MS (default
// "0,40": raw loopback, then DevTools' added latency per request, as between a browser and a
// remote bucket). Prints one JSON line per run; each object's stored size is checked.
import { startS3Stack } from '../../e2e/support/s3-stack.ts';

const size = Number(process.env.BENCH_SIZE ?? 1024 * 1024 * 1024);
const reps = Number(process.env.BENCH_REPS ?? 2);
const latencies = (process.env.BENCH_LATENCIES_MS ?? '0,40').split(',').map(Number);
const pageDir = process.argv[2];
if (!pageDir) throw new Error('usage: measure.mjs PAGE_DIR');

type Bench = Record<string, (n: number) => Promise<{ ms: number; key: string }>>;

const stack = await startS3Stack(pageDir);
try {
  for (const latency of latencies) {
    for (let rep = 1; rep <= reps; rep += 1) {
      for (const peer of rep % 2 ? ['ferry', 'uppy'] : ['uppy', 'ferry']) {
        const page = await stack.open();
        if (latency > 0) {
          const cdp = await stack.browser.context.newCDPSession(page);
          await cdp.send('Network.enable');
          await cdp.send('Network.emulateNetworkConditions', {
            offline: false,
            latency,
            downloadThroughput: -1,
            uploadThroughput: -1,
          });
        }
        const out = await page.evaluate(
          ({ peer, size }) => {
            const run = (window as unknown as { bench: Bench }).bench[peer];
            if (!run) throw new Error(`no bench for ${peer}`);
            return run(size);
          },
          { peer, size },
        );
        await page.close();
        const head = await stack.garage.s3('HEAD', `/${out.key}`);
        const stored = Number(head.headers.get('content-length'));
        if (stored !== size) throw new Error(`${peer}: stored ${stored} bytes, sent ${size}`);
        await stack.garage.s3('DELETE', `/${out.key}`);
        const mbps = size / 1e6 / (out.ms / 1000);
        console.log(
          JSON.stringify({ peer, latency, rep, bytes: size, ms: Math.round(out.ms), mbps: Number(mbps.toFixed(1)) }),
        );
      }
    }
  }
} finally {
  await stack.stop();
}
