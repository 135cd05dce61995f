// Uploads the same COUNT small real files (tmpfs) through each Dashboard in headless Chromium,
// as a person would: pick them in the Dashboard's <input type=file>, wait until they are listed,
// click upload. Times click to done in the page (Ferry: the status reads "Complete"; Uppy: every
// file is upload-complete), counts the page's requests to /files/ by method, and compares every
// stored file with its source by sha256. Each repetition starts a fresh server and data
// directory (on disk, so the default durability costs what it costs); peers alternate.
// Prints one JSON line per run, then one summary line; never fails on timing.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '../../e2e/support/browser.ts';
import { repoRoot, sha256, startFerry, storedTusUploads } from '../../e2e/support/ferry.ts';
import { resultsDir } from '../support/page.ts';

const results = resultsDir(
  'measure.mjs RESULTS_DIR SUITE_DIR (bench/small-files/run.sh builds the pages and runs this)',
);
// The bundle runs from the results directory: the peer's server stays in the suite's, beside its node_modules.
const suite = process.argv[3] ?? '.';
const count = Number(process.env.FILES ?? 500);
const kib = Number(process.env.KIB ?? 10);
const reps = Number(process.env.REPS ?? 3);
// run.sh names the release binary (building it when FERRY_BIN names none).
const ferryBin = process.env.FERRY_BIN ?? join(repoRoot, 'target', 'release', 'ferry');
// Ferry's page: this checkout's build by default; another build's directory to compare with it.
const ferryUi = process.env.FERRY_UI ?? join(results, 'ferry');
const peers = (process.env.PEERS ?? 'ferry,uppy').split(',');
// Extra `ferry serve` flags, for diagnosis only (e.g. `--fsync never`): the goal is at the defaults.
const ferryArgs = (process.env.FERRY_ARGS ?? '').split(' ').filter(Boolean);
// A query for Ferry's demo page, for diagnosis only (e.g. `limit=6`, `recoveryMaxCopy=0`).
const ferryQuery = process.env.FERRY_QUERY ? `?${process.env.FERRY_QUERY}` : '';
// PROFILE=1: record a CPU profile of the page from click to done (diagnosis; see profile.mjs).
const profiling = process.env.PROFILE === '1';
const timeout = 300_000;

/** COUNT files of KIB random KiB on tmpfs, and the sha256 of each by name. */
async function sourceFiles() {
  const dir = join(process.env.BENCH_TMPFS ?? '/dev/shm', `ferry-bench-small-${count}x${kib}k`);
  await mkdir(dir, { recursive: true });
  const have = new Set(await readdir(dir));
  const digests = new Map();
  for (let i = 0; i < count; i += 1) {
    const name = `file-${String(i).padStart(5, '0')}.bin`;
    if (!have.has(name)) await writeFile(join(dir, name), randomBytes(kib * 1024));
    digests.set(name, sha256(await readFile(join(dir, name))));
  }
  return { paths: [...digests.keys()].map((n) => join(dir, n)), digests };
}

/** @tus/server's peer process: the Uppy page and the tus endpoint on one origin. */
async function startPeer() {
  const dataDir = await mkdtemp(join(tmpdir(), 'ferry-bench-peer-'));
  const child = spawn(process.execPath, [join(suite, 'peer-server.mjs'), join(results, 'uppy'), dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((ok, fail) => {
    child.stdout.on('data', (chunk) => {
      const match = /listening on (http:\/\/\S+)/.exec(chunk.toString());
      if (match) ok(match[1]);
    });
    child.once('exit', (code) => fail(new Error(`peer server exited with ${code}`)));
  });
  return {
    url,
    dataDir,
    async stop() {
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill('SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** @tus/file-store keeps `<id>` and `<id>.json` (the upload with its metadata). */
async function storedPeerUploads(dataDir) {
  const names = await readdir(dataDir);
  const stored = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const id = name.slice(0, -'.json'.length);
    const info = JSON.parse(await readFile(join(dataDir, name), 'utf8'));
    const bytes = await readFile(join(dataDir, id));
    stored.push({ filename: info.metadata?.filename, sha256: sha256(bytes), size: bytes.length });
  }
  return stored;
}

// Per peer: how to start its server, the page's selectors and the conditions the page checks.
const pages = {
  ferry: {
    start: () => startFerry(['--ui-dir', ferryUi, ...ferryArgs], { bin: ferryBin }),
    stored: storedTusUploads,
    ready: '!!window.ferry',
    input: '.ferry-dashboard input[type=file]:not([webkitdirectory])',
    listed: `window.ferry.getFiles().length === ${count} && window.ferry.getFiles().every((f) => f.size !== null)`,
    button: (tab) => tab.getByRole('button', { name: new RegExp(`^Upload ${count} files$`) }),
    done: `document.querySelector('[data-testid=ferry-status]')?.textContent === 'Complete'`,
  },
  uppy: {
    start: startPeer,
    stored: storedPeerUploads,
    ready: '!!window.uppy',
    input: '.uppy-Dashboard-input:not([webkitdirectory])',
    listed: `window.uppy.getFiles().length === ${count}`,
    button: (tab) => tab.locator('.uppy-StatusBar-actionBtn--upload'),
    done: `window.uppy.getFiles().length === ${count} && window.uppy.getFiles().every((f) => f.progress.uploadComplete)`,
  },
};

/** One upload of every file through `name`'s Dashboard: its figures, stored bytes checked. */
async function run(browser, name, files) {
  const page = pages[name];
  const server = await page.start();
  const tab = await browser.context.newPage();
  const requests = {};
  tab.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/files')) requests[r.method()] = (requests[r.method()] ?? 0) + 1;
  });
  try {
    await tab.goto(`${server.url}/${name === 'ferry' ? ferryQuery : ''}`);
    await tab.waitForFunction(page.ready);
    await tab.locator(page.input).first().setInputFiles(files.paths, { timeout });
    await tab.waitForFunction(page.listed, undefined, { timeout, polling: 100 });
    // The clock starts at the click (capture phase) and stops on the first frame that sees done.
    await tab.evaluate((done) => {
      const probe = { clickAt: null, doneAt: null };
      window.__bench = probe;
      document.addEventListener('click', () => (probe.clickAt ??= performance.now()), true);
      const isDone = new Function(`return ${done}`);
      const frame = () => {
        if (probe.clickAt !== null && isDone()) probe.doneAt = performance.now();
        else requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }, page.done);
    const profiler = profiling ? await startProfile(browser, tab) : undefined;
    const metrics = await mainThreadMetrics(browser, tab);
    await page.button(tab).click();
    await tab.waitForFunction('window.__bench.doneAt !== null', undefined, { timeout, polling: 50 });
    const busy = await metrics.since();
    if (profiler) await profiler.stop(join(results, `${name}.cpuprofile`));
    const probe = await tab.evaluate(() => window.__bench);
    const stored = await page.stored(server.dataDir);
    const exact = stored.filter((s) => files.digests.get(s.filename) === s.sha256).length;
    return {
      peer: name,
      files: count,
      kib,
      ms: Math.round(probe.doneAt - probe.clickAt),
      busy,
      requests,
      stored: stored.length,
      exact,
    };
  } finally {
    await tab.close();
    await server.stop();
  }
}

/**
 * The page's main-thread time from now to `since()`, in ms, from Chromium's own counters: all
 * tasks, script, style and layout. Less sensitive than wall time to other load on the machine,
 * it shows where a page's time goes (the main thread is what limits many small uploads).
 */
async function mainThreadMetrics(browser, tab) {
  const cdp = await browser.context.newCDPSession(tab);
  await cdp.send('Performance.enable');
  const read = async () => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
  };
  const before = await read();
  return {
    async since() {
      const after = await read();
      await cdp.detach();
      const ms = (name) => Math.round((after[name] - before[name]) * 1000);
      return {
        tasks: ms('TaskDuration'),
        script: ms('ScriptDuration'),
        style: ms('RecalcStyleDuration'),
        layout: ms('LayoutDuration'),
      };
    },
  };
}

/** Starts the page's CPU profiler; `stop` writes the profile and prints its heaviest functions. */
async function startProfile(browser, tab) {
  const cdp = await browser.context.newCDPSession(tab);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  return {
    async stop(path) {
      const { profile } = await cdp.send('Profiler.stop');
      await writeFile(path, JSON.stringify(profile));
      await cdp.detach();
      for (const line of heaviest(profile, 25)) console.error(line);
    },
  };
}

/** The `top` functions by self time in a CPU profile, as printable lines. */
function heaviest(profile, top) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const { functionName, url, lineNumber } = byNode.get(id).callFrame;
    const key = `${functionName || '(anonymous)'} ${url.split('/').pop()}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([key, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`,
    );
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const files = await sourceFiles();
const browser = await launchBrowser();
const runs = [];
try {
  for (let rep = 0; rep < reps; rep += 1) {
    // Alternate which peer goes first, so neither always runs on a warmer machine.
    for (const name of rep % 2 ? [...peers].reverse() : peers) {
      const figures = { rep, ...(await run(browser, name, files)) };
      runs.push(figures);
      console.log(JSON.stringify(figures));
    }
  }
} finally {
  await browser.close();
}
const summary = { files: count, kib, reps };
for (const name of peers) {
  const mine = runs.filter((r) => r.peer === name);
  summary[name] = {
    medianMs: median(mine.map((r) => r.ms)),
    requests: mine[0]?.requests,
    allExact: mine.every((r) => r.exact === count && r.stored === count),
  };
}
if (summary.ferry && summary.uppy)
  summary.uppyOverFerry = Number((summary.uppy.medianMs / summary.ferry.medianMs).toFixed(2));
console.log(JSON.stringify({ summary }));
