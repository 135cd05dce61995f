// Times, in headless Chromium, `addFiles(N generated files)` until the Dashboard has painted the
// new count, for Ferry's demo page and the Uppy peer. Each N runs in a fresh tab. Prints one JSON
// line per run. The files are generated before the clock starts; the clock stops after the
// frame that shows the count (one more requestAnimationFrame, so its paint is included).
import { join } from 'node:path';
import { resultsDir, startPageDriver } from '../support/page.ts';

const results = resultsDir('measure.mjs RESULTS_DIR (bench/core/run.sh builds the pages and runs this)');
const list = (v, d) => (v ?? d).split(',').map(Number);
const plan = {
  ferry: list(process.env.BENCH_FERRY_COUNTS, '1000,10000,100000'),
  // Uppy copies its whole file map per added file (quadratic): 100,000 would take many minutes.
  uppy: list(process.env.BENCH_UPPY_COUNTS, '1000,2000,10000'),
};
const timeoutMs = Number(process.env.BENCH_TIMEOUT_MS ?? 120_000);

// How each page adds files, and where its Dashboard shows how many there are.
const pages = {
  ferry: { global: 'ferry', shown: '[data-testid=ferry-status], .ferry-toolbar-title' },
  uppy: { global: 'uppy', shown: '.uppy-DashboardContent-title, .uppy-StatusBar-actionBtn--upload' },
};

const driver = await startPageDriver();
try {
  for (const [name, page] of Object.entries(pages)) {
    for (const count of plan[name]) {
      const { tab, close } = await driver.open(join(results, name), `!!window.${page.global}`);
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
      await close();
    }
  }
} finally {
  await driver.close();
}
