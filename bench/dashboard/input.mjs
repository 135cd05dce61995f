// Picks 10,000 real files (on a tmpfs directory) through each Dashboard's own <input type=file>
// in headless Chromium, as a person would. Real picked files matter: Chromium looks up a picked
// file's size from disk on the first `.size` read, which in-memory `new File([...])` never does.
// Measures, from the input's change event: the time until the count and the first rows are
// shown, the longest main-thread task (PerformanceObserver 'longtask') until the files have
// settled (Ferry: every size known; Uppy: every file in its state) plus a quiet second, how
// many tasks went over 100 ms, and the long animation frame holding the change event (its end:
// the first rows painted; its rendering part: style, layout, paint). Prints JSON lines; never
// fails on timing. BENCH_PAGES=ferry (or uppy) measures one page only.
import { join } from 'node:path';
import { resultsDir, startPageDriver } from '../support/page.ts';
import { smallFiles } from './files.mjs';

const results = resultsDir('input.mjs RESULTS_DIR (bench/dashboard/run.sh builds the pages and runs this)');
const count = Number(process.env.BENCH_FILES ?? 10_000);

// Per page: its file input (not the folder one), and the conditions read every frame.
const pages = {
  ferry: {
    ready: '!!window.ferry',
    input: '.ferry-dashboard input[type=file]:not([webkitdirectory])',
    count: `(document.querySelector('.ferry-toolbar-title')?.textContent ?? '').includes('${count}')`,
    rows: `document.querySelectorAll('[data-testid=ferry-file]').length > 0`,
    settled: `window.ferry.getFiles().length === ${count} && window.ferry.getFiles().every((f) => f.size !== null)`,
  },
  uppy: {
    ready: '!!window.uppy',
    input: '.uppy-Dashboard-input:not([webkitdirectory])',
    count: `(document.querySelector('.uppy-DashboardContent-title')?.textContent ?? '').includes('${count}')`,
    rows: `document.querySelectorAll('.uppy-Dashboard-Item').length > 0`,
    settled: `window.uppy.getFiles().length === ${count}`,
  },
};

const only = new Set((process.env.BENCH_PAGES ?? 'ferry,uppy').split(','));
const { paths } = await smallFiles(count);
const driver = await startPageDriver();
try {
  for (const [name, page] of Object.entries(pages)) {
    if (!only.has(name)) continue;
    const { tab, close } = await driver.open(join(results, `${name}-full`), page.ready);
    // Arm the page: long-task observer, the change-event clock, and a per-frame check.
    await tab.evaluate(({ count, rows }) => {
      const probe = { tasks: [], frames: [], changeAt: null, countAt: null, rowsAt: null };
      window.__bench = probe;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) probe.tasks.push({ start: e.startTime, ms: e.duration });
      }).observe({ type: 'longtask', buffered: false });
      // Long animation frames: a task and the rendering after it (style, layout, paint), so the
      // frame that first shows the files is counted whole, not only its script.
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          probe.frames.push({ start: e.startTime, end: e.startTime + e.duration, render: e.renderStart || null });
        }
      }).observe({ type: 'long-animation-frame', buffered: false });
      // Capture phase on the document: runs before the Dashboard's own handler.
      document.addEventListener('change', () => (probe.changeAt ??= performance.now()), true);
      const isCount = new Function(`return ${count}`);
      const hasRows = new Function(`return ${rows}`);
      // performance.now(), not the rAF timestamp: after a long task that one is stale.
      const frame = () => {
        const now = performance.now();
        if (probe.changeAt !== null) {
          if (probe.countAt === null && isCount()) probe.countAt = now;
          if (probe.rowsAt === null && hasRows()) probe.rowsAt = now;
        }
        if (probe.countAt === null || probe.rowsAt === null) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }, page);
    await tab.locator(page.input).first().setInputFiles(paths, { timeout: 300_000 });
    await tab.waitForFunction(page.settled, undefined, { timeout: 300_000, polling: 100 });
    await tab.waitForFunction('window.__bench.countAt !== null && window.__bench.rowsAt !== null', undefined, {
      timeout: 120_000,
    });
    const settledAt = await tab.evaluate(() => performance.now());
    // A quiet second after settling, so trailing work (writes, thumbnails) is counted too.
    await tab.waitForTimeout(1000);
    const probe = await tab.evaluate(() => window.__bench);
    const since = probe.tasks.filter((t) => t.start + t.ms >= probe.changeAt);
    const round = (v) => (v === null ? null : Math.round(v));
    // The task that dispatched the change event also holds Chromium's own work before it
    // (making the File objects): that part is not the page's.
    const changeTask = since.find((t) => t.start <= probe.changeAt && t.start + t.ms >= probe.changeAt);
    // The frame holding the change event: its rendering ends when the first rows are painted.
    const frame = probe.frames.find((f) => f.start <= probe.changeAt && f.end >= probe.changeAt);
    console.log(
      JSON.stringify({
        page: name,
        files: count,
        countMs: round(probe.countAt - probe.changeAt),
        firstRowsMs: round(probe.rowsAt - probe.changeAt),
        settledMs: round(settledAt - probe.changeAt),
        longestTaskMs: round(Math.max(0, ...since.map((t) => t.ms))),
        tasksOver100Ms: since.filter((t) => t.ms > 100).length,
        changeTaskBeforeEventMs: changeTask ? round(probe.changeAt - changeTask.start) : 0,
        changeTaskAfterEventMs: changeTask ? round(changeTask.start + changeTask.ms - probe.changeAt) : 0,
        longestOtherTaskMs: round(Math.max(0, ...since.filter((t) => t !== changeTask).map((t) => t.ms))),
        changeFrameEndMs: frame ? round(frame.end - probe.changeAt) : null,
        changeFrameRenderMs: frame?.render ? round(frame.end - frame.render) : null,
      }),
    );
    await close();
  }
} finally {
  await driver.close();
}
