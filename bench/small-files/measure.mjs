// Uploads the same COUNT small real files (tmpfs) through each Dashboard in headless Chromium,
// as a person would: pick them in the Dashboard's <input type=file>, wait until they are listed,
// click upload. Times click to done in the page (Ferry: the status reads "Complete"; Uppy: every
// file is upload-complete), counts the page's requests to /files/ from its resource timing, and
// compares every stored file with its source by sha256. Each repetition starts a fresh server
// and data directory (on disk, so the default durability costs what it costs); peers alternate.
// The browser is driven over a bare DevTools pipe (bench/support/cdp.ts says why not Playwright),
// and with HARNESSES also with the Network domain on and through Playwright, in the same run.
// Prints one JSON line per run, then one summary line; never fails on timing.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, sha256, startFerry, storedTusUploads } from '../../e2e/support/ferry.ts';
import { launchCdpBrowser } from '../support/cdp.ts';
import { resultsDir } from '../support/page.ts';
import { launchPlaywrightBrowser } from '../support/pw.ts';

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
// The floor page and the server alone by default, so every run has its floors beside Ferry.
const peers = (process.env.PEERS ?? 'ferry,floor,wire,uppy').split(',');
// Extra `ferry serve` flags, for diagnosis only (e.g. `--fsync never`): the goal is at the defaults.
const ferryArgs = (process.env.FERRY_ARGS ?? '').split(' ').filter(Boolean);
// A query for Ferry's demo page, for diagnosis only (e.g. `limit=6`, `recoveryMaxCopy=0`).
// A peer named `ferry?QUERY` (e.g. `PEERS=ferry,ferry?readAhead=off`) is Ferry's page with it, so
// two settings alternate in one run; FERRY_QUERY applies to plain `ferry`. A peer named
// `ferry@DIR` is the page built in DIR (e.g. `PEERS=ferry,ferry@/tmp/before,uppy`: two commits'
// pages in one run). Flags after a peer's name go to its server (`PEERS='ferry,ferry --fsync never'`).
// `NAME#BIN` runs that peer's server from the `ferry` binary BIN instead of FERRY_BIN (e.g.
// `PEERS='wire,wire#/tmp/ferry-before,ferry,ferry#/tmp/ferry-before,uppy'`: two server builds
// alternating in one run).
// The peer `floor` is the bare page (floor/index.html: one POST per file, no library) on Ferry's server.
// The peer `wire` sends the same POSTs from Node over 6 connections (no browser): the server's floor.
const ferryQuery = process.env.FERRY_QUERY ? `?${process.env.FERRY_QUERY}` : '';
// PROFILE=1: record a CPU profile of the page from click to done (diagnosis; see profile.mjs).
const profiling = process.env.PROFILE === '1';
// TRACE=1: record a Chromium trace from click to done and print where each thread's time went.
const tracing = process.env.TRACE === '1';
const thinkMs = Number(process.env.THINK_MS ?? 0);
// HARNESSES=bare,network,playwright: ways of driving Chromium compared in one run, a browser
// each: the bare DevTools pipe; the same with the Network domain on in every page; Playwright
// itself (bench/support/pw.ts: its picking, click and waits). Default: `bare`, or `network` with
// DEVTOOLS_NETWORK=1. The browsers keep their profiles (IndexedDB, where Ferry's recovery writes)
// in the temporary directory, on the same disk as the servers' data; `BROWSER_TMPDIR=/dev/shm`,
// or `HARNESS@/dev/shm` for one harness (`HARNESSES=bare,bare@/dev/shm`), puts them on tmpfs.
const harnesses = (process.env.HARNESSES ?? (process.env.DEVTOOLS_NETWORK === '1' ? 'network' : 'bare')).split(',');
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
    start: (ui = ferryUi, args = [], bin = ferryBin) =>
      startFerry(['--ui-dir', ui, ...ferryArgs, ...args], { bin, keepData: true }),
    stored: storedTusUploads,
    ready: '!!window.ferry',
    input: '.ferry-dashboard input[type=file]:not([webkitdirectory])',
    listed: `window.ferry.getFiles().length === ${count} && window.ferry.getFiles().every((f) => f.size !== null)
      && document.querySelector('.ferry-status[data-state=waiting] .ferry-status-actions button')?.textContent === 'Upload ${count} files'`,
    button: '.ferry-status[data-state=waiting] .ferry-status-actions button',
    done: `document.querySelector('[data-testid=ferry-status]')?.textContent === 'Complete'`,
  },
  // The floor: a page with no library that POSTs each file once (floor/index.html), same server.
  floor: {
    start: (_ui, args = [], bin = ferryBin) =>
      startFerry(['--ui-dir', join(suite, 'floor'), ...ferryArgs, ...args], { bin, keepData: true }),
    stored: storedTusUploads,
    ready: '!!window.floor',
    input: '#pick',
    listed: `window.floor.files.length === ${count}`,
    button: '#upload',
    done: `document.getElementById('status').textContent === 'Complete'`,
  },
  uppy: {
    start: startPeer,
    stored: storedPeerUploads,
    ready: '!!window.uppy',
    input: '.uppy-Dashboard-input:not([webkitdirectory])',
    listed: `window.uppy.getFiles().length === ${count} && !!document.querySelector('.uppy-StatusBar-actionBtn--upload')`,
    button: '.uppy-StatusBar-actionBtn--upload',
    done: `window.uppy.getFiles().length === ${count} && window.uppy.getFiles().every((f) => f.progress.uploadComplete)`,
  },
};

/**
 * The server's floor: the same creation-with-upload POSTs as the floor page, sent from Node over
 * as many keep-alive connections as Chromium opens to one HTTP/1.1 origin (6, or `?connections=N`),
 * no browser at all. What is left between this and a page is the page's and the browser's.
 */
async function runWire(query, args, files, bin = ferryBin) {
  execFileSync('sync');
  const connections = Number(new URLSearchParams(query ?? '').get('connections') ?? 6);
  const server = await startFerry([...ferryArgs, ...args], { bin, keepData: true });
  dataDirs.push(server.dataDir);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const bodies = await Promise.all(files.paths.map((path) => readFile(path)));
  const post = (path, body) =>
    new Promise((ok, fail) => {
      const name = path.split('/').pop();
      const req = request(`${server.url}/files/`, {
        method: 'POST',
        agent,
        headers: {
          'Tus-Resumable': '1.0.0',
          'Upload-Length': String(body.length),
          'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')}`,
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': String(body.length),
        },
      });
      req.once('response', (res) => {
        res.resume();
        res.once('end', () => ok(res.statusCode === 201 && res.headers['upload-offset'] === String(body.length)));
      });
      req.once('error', fail);
      req.end(body);
    });
  try {
    const started = performance.now();
    let index = 0;
    let failed = 0;
    const lane = async () => {
      while (index < bodies.length) {
        const i = index++;
        if (!(await post(files.paths[i], bodies[i]))) failed += 1;
      }
    };
    await Promise.all(Array.from({ length: connections }, lane));
    const ms = Math.round(performance.now() - started);
    const stored = await storedTusUploads(server.dataDir);
    const exact = stored.filter((s) => files.digests.get(s.filename) === s.sha256).length;
    return { files: count, kib, ms, failed, stored: stored.length, exact };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

/** One upload of every file through `name`'s Dashboard: its figures, stored bytes checked. */
async function run(browser, name, files) {
  // `ferry@DIR?QUERY`: Ferry's page built in DIR (another commit's), with QUERY.
  // `NAME --flag value`: that peer's server gets the flags (e.g. `ferry --fsync never`).
  const [spec = '', ...args] = name.split(' ').filter(Boolean);
  const [peer, query] = spec.split('?');
  // `NAME#BIN`: that peer's server is the `ferry` binary BIN.
  const [named, bin] = peer.split('#');
  const [kind, ui] = named.split('@');
  if (kind === 'wire') return { peer: name, ...(await runWire(query, args, files, bin)) };
  const page = pages[kind];
  // What earlier runs left unwritten (the peer never fsyncs) goes to disk now, not during this run.
  execFileSync('sync');
  const server = await page.start(ui, args, bin);
  dataDirs.push(server.dataDir);
  const search = query !== undefined ? `?${query}` : kind === 'ferry' ? ferryQuery : '';
  const tab = await browser.open(`${server.url}/${search}`);
  try {
    await tab.waitFor(page.ready);
    await tab.setInputFiles(page.input, files.paths);
    await tab.waitFor(page.listed);
    // THINK_MS: a person's pause between seeing the list and clicking (0, no pause, by default).
    if (thinkMs > 0) await new Promise((ok) => setTimeout(ok, thinkMs));
    // The clock starts at the click (capture phase) and stops on the first frame that sees done.
    // The resource timing buffer holds every request of the run (its default is 250 entries).
    await tab.evaluate(`(() => {
      performance.clearResourceTimings();
      performance.setResourceTimingBufferSize(100000);
      const probe = { clickAt: null, doneAt: null };
      window.__bench = probe;
      document.addEventListener('click', () => (probe.clickAt ??= performance.now()), true);
      const frame = () => {
        if (probe.clickAt !== null && (${page.done})) probe.doneAt = performance.now();
        else requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    })()`);
    const profiler = profiling ? await startProfile(tab) : undefined;
    const tracer = tracing ? await startTrace(tab) : undefined;
    const metrics = await mainThreadMetrics(tab);
    await tab.click(page.button);
    await tab.waitFor('window.__bench.doneAt !== null', { pollMs: 50, timeoutMs: timeout });
    const busy = await metrics.since();
    if (profiler) await profiler.stop(join(results, `${name}.cpuprofile`));
    if (tracer) await tracer.stop(join(results, `${name}.trace.json`));
    const probe = await tab.evaluate('window.__bench');
    // Creations go to /files/ itself, every later request to an upload's URL under it.
    const requests = await tab.evaluate(`(() => {
      const paths = performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname);
      return {
        create: paths.filter((p) => p === '/files/' || p === '/files').length,
        upload: paths.filter((p) => p.startsWith('/files/') && p !== '/files/').length,
      };
    })()`);
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
async function mainThreadMetrics(tab) {
  await tab.send('Performance.enable');
  const read = async () => {
    const { metrics } = await tab.send('Performance.getMetrics');
    return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
  };
  const before = await read();
  return {
    async since() {
      const after = await read();
      await tab.send('Performance.disable');
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
async function startProfile(tab) {
  await tab.send('Profiler.enable');
  await tab.send('Profiler.setSamplingInterval', { interval: 200 });
  await tab.send('Profiler.start');
  return {
    async stop(path) {
      const { profile } = await tab.send('Profiler.stop');
      await writeFile(path, JSON.stringify(profile));
      await tab.send('Profiler.disable');
      for (const line of heaviest(profile, 25)) console.error(line);
    },
  };
}

/** Starts a Chromium trace; `stop` writes it and prints each busy thread's heaviest events by self time. */
async function startTrace(tab) {
  const events = [];
  tab.on('Tracing.dataCollected', ({ value }) => events.push(...value));
  const complete = new Promise((ok) => tab.on('Tracing.tracingComplete', ok));
  await tab.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: {
      includedCategories: [
        'toplevel',
        'devtools.timeline',
        'blink',
        'v8',
        'netlog',
        'mojom',
        'loading',
        'disabled-by-default-devtools.timeline',
      ],
    },
  });
  return {
    async stop(path) {
      await tab.send('Tracing.end');
      await complete;
      await writeFile(path, JSON.stringify({ traceEvents: events }));
      for (const line of traceSummary(events, 12)) console.error(line);
    },
  };
}

/** Per process and thread with over 100 ms of events: total, then the `top` event names by self time. */
function traceSummary(events, top) {
  const names = new Map();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}/${e.tid}`, e.args.name);
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || typeof e.dur !== 'number') continue;
    const key = `${e.pid}/${e.tid}`;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  const lines = [];
  for (const [key, list] of byThread) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const self = new Map();
    const stack = [];
    let total = 0;
    for (const e of list) {
      while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
      const parent = stack.at(-1);
      if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur);
      else total += e.dur;
      self.set(e.name, (self.get(e.name) ?? 0) + e.dur);
      stack.push(e);
    }
    if (total < 100_000) continue;
    lines.push(`${names.get(key) ?? key} (${key}): ${(total / 1000).toFixed(0)} ms`);
    for (const [name, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
      lines.push(`  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`);
  }
  return lines;
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

/**
 * Runs `launch` with TMPDIR set to `dir` (when given): the browsers' profiles (IndexedDB) go
 * there, the servers' data directories, made later, stay in the usual temporary directory.
 */
async function withTmpdir(dir, launch) {
  const before = process.env.TMPDIR;
  if (dir) process.env.TMPDIR = dir;
  try {
    return await launch();
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// Every run's stored uploads, removed after the last run. Removing a thousand files just before
// the next run makes that run's creations slower on ext4 without a journal (this VM's disk): it
// skips each inode freed in the last minutes, so the cost would grow from run to run. Each run
// starts after a `sync`, so none pays for writing back another's files.
const dataDirs = [];
const files = await sourceFiles();
const browsers = {};
const runs = [];
try {
  for (const harness of harnesses) {
    // `HARNESS@DIR`: that harness's browser keeps its profile in DIR (e.g. `bare@/dev/shm`).
    const [kind, dir = process.env.BROWSER_TMPDIR] = harness.split('@');
    browsers[harness] = await withTmpdir(dir, () =>
      kind === 'playwright' ? launchPlaywrightBrowser() : launchCdpBrowser({ network: kind === 'network' }),
    );
  }
  for (let rep = 0; rep < reps; rep += 1) {
    for (const harness of rep % 2 ? [...harnesses].reverse() : harnesses) {
      // Alternate which peer goes first, so neither always runs on a warmer machine.
      for (const name of rep % 2 ? [...peers].reverse() : peers) {
        const figures = { rep, harness, ...(await run(browsers[harness], name, files)) };
        runs.push(figures);
        console.log(JSON.stringify(figures));
      }
    }
  }
} finally {
  for (const browser of Object.values(browsers)) await browser.close();
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
}
// One summary line per harness, the ratio of its medians last.
for (const harness of harnesses) {
  const summary = { harness, files: count, kib, reps, thinkMs };
  for (const name of peers) {
    const mine = runs.filter((r) => r.peer === name && r.harness === harness);
    summary[name] = {
      medianMs: median(mine.map((r) => r.ms)),
      requests: mine[0]?.requests,
      allExact: mine.every((r) => r.exact === count && r.stored === count),
    };
  }
  if (summary.ferry?.medianMs && summary.uppy?.medianMs)
    summary.uppyOverFerry = Number((summary.uppy.medianMs / summary.ferry.medianMs).toFixed(2));
  // Every other page against Uppy and against the floor (the bare page), when they ran.
  const ratio = (a, b) => (a && b ? Number((a / b).toFixed(2)) : undefined);
  summary.uppyOver = {};
  summary.overFloor = {};
  for (const name of peers) {
    if (name !== 'uppy') summary.uppyOver[name] = ratio(summary.uppy?.medianMs, summary[name].medianMs);
    if (name !== 'floor') summary.overFloor[name] = ratio(summary[name].medianMs, summary.floor?.medianMs);
  }
  console.log(JSON.stringify({ summary }));
}
