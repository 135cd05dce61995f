// Times, in headless Chromium, `addFiles(N generated files)` until the Dashboard has painted the
// new count, for Ferry's demo page and the Uppy peer. Each N runs in a fresh tab. Prints one JSON
// line per run. The files are generated before the clock starts; the clock stops after the
// frame that shows the count (one more requestAnimationFrame, so its paint is included).
import { createReadStream, existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const here = import.meta.dirname;
const results = resolve(here, '../results/core');
const list = (v, d) => (v ?? d).split(',').map(Number);
const plan = {
  ferry: list(process.env.BENCH_FERRY_COUNTS, '1000,10000,100000'),
  // Uppy copies its whole file map per added file (quadratic): 100,000 would take many minutes.
  uppy: list(process.env.BENCH_UPPY_COUNTS, '1000,2000,10000'),
};
const timeoutMs = Number(process.env.BENCH_TIMEOUT_MS ?? 120_000);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

function serve(dir) {
  const server = createServer((req, res) => {
    const path = join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = existsSync(path) && statSync(path).isFile() ? path : join(dir, 'index.html');
    res.setHeader('content-type', types[extname(file)] ?? 'application/octet-stream');
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// How each page adds files, and where its Dashboard shows how many there are.
const pages = {
  ferry: { global: 'ferry', shown: '[data-testid=ferry-status], .ferry-toolbar-title' },
  uppy: { global: 'uppy', shown: '.uppy-DashboardContent-title, .uppy-StatusBar-actionBtn--upload' },
};

const userDataDir = await mkdtemp(join(tmpdir(), 'ferry-bench-core-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  for (const [name, page] of Object.entries(pages)) {
    const server = await serve(join(results, name));
    for (const count of plan[name]) {
      const tab = await context.newPage();
      await tab.goto(`http://127.0.0.1:${server.address().port}/`);
      await tab.waitForFunction(`!!window.${page.global}`);
      const run = tab.evaluate(
        async ({ count, global, shown, timeoutMs }) => {
          const files = Array.from({ length: count }, (_, i) => ({
            name: `file-${i}.txt`,
            type: 'text/plain',
            data: new File([`#${i}`], `file-${i}.txt`, { type: 'text/plain', lastModified: i }),
            source: 'local',
          }));
          const frame = () => new Promise((ok) => requestAnimationFrame(ok));
          // The count appears as digits in the Dashboard's title or status ("10000 files selected").
          const painted = () =>
            [...document.querySelectorAll(shown)].some((el) => el.textContent.replace(/\D/g, '') === String(count));
          await frame();
          const start = performance.now();
          window[global].addFiles(files);
          while (!painted()) {
            if (performance.now() - start > timeoutMs) return { ms: null, timedOut: true };
            await frame();
          }
          await frame();
          const ms = performance.now() - start;
          const state = window[global].getState();
          const stored = Array.isArray(state.fileIds) ? state.fileIds.length : Object.keys(state.files).length;
          return { ms, stored };
        },
        { count, ...page, timeoutMs },
      );
      const r = await run;
      console.log(
        JSON.stringify({
          page: name,
          files: count,
          ms: r.ms === null ? null : Math.round(r.ms),
          stored: r.stored ?? null,
        }),
      );
      await tab.close();
    }
    server.close();
  }
} finally {
  await context.close();
  await rm(userDataDir, { recursive: true, force: true });
}
