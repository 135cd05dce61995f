// Drops a folder of 10,000 real files (tmpfs, the same files input.mjs picks) onto each
// Dashboard in headless Chromium. The drop is Chromium's own: CDP `Input.dispatchDragEvent` with
// the directory's path in `files` hands the page a DataTransfer whose item is a real directory
// entry (`webkitGetAsEntry().isDirectory`), read through `readEntries` and `file()` as a
// person's drop is. Measures, from the drop event: the task that held it (its part after the
// event is the page's), the time until a count and the first rows are shown, until the count is
// the whole folder, until the files have settled (Ferry: every size known; Uppy: every file in
// its state), the longest main-thread task (PerformanceObserver 'longtask') until then plus a
// quiet second, and how many went over 100 ms. Prints JSON lines; never fails on timing.
// BENCH_PAGES=ferry (or uppy) measures one page only.
import { join } from 'node:path';
import { resultsDir, startPageDriver } from '../support/page.ts';
import { smallFiles } from './files.mjs';

const results = resultsDir('drop.mjs RESULTS_DIR (bench/dashboard/run.sh builds the pages and runs this)');
const count = Number(process.env.BENCH_FILES ?? 10_000);

// Per page: the drop target, and the conditions read every frame.
const pages = {
  ferry: {
    ready: '!!window.ferry',
    target: '.ferry-dashboard',
    count: `/\\d/.test(document.querySelector('.ferry-toolbar-title')?.textContent ?? '')`,
    full: `(document.querySelector('.ferry-toolbar-title')?.textContent ?? '').includes('${count}')`,
    rows: `document.querySelectorAll('[data-testid=ferry-file]').length > 0`,
    settled: `window.ferry.getFiles().length === ${count} && window.ferry.getFiles().every((f) => f.size !== null)`,
  },
  uppy: {
    ready: '!!window.uppy',
    target: '.uppy-Dashboard-inner',
    count: `/\\d/.test(document.querySelector('.uppy-DashboardContent-title')?.textContent ?? '')`,
    full: `(document.querySelector('.uppy-DashboardContent-title')?.textContent ?? '').includes('${count}')`,
    rows: `document.querySelectorAll('.uppy-Dashboard-Item').length > 0`,
    settled: `window.uppy.getFiles().length === ${count}`,
  },
};

const only = new Set((process.env.BENCH_PAGES ?? 'ferry,uppy').split(','));
const { dir } = await smallFiles(count);
const driver = await startPageDriver();
try {
  for (const [name, page] of Object.entries(pages)) {
    if (!only.has(name)) continue;
    const { tab, close } = await driver.open(join(results, `${name}-full`), page.ready);
    // Arm the page: long-task observer, the drop clock, a per-frame check, and what the
    // drop carried (to tell a real folder drop from a flat list of files).
    await tab.evaluate(({ count, full, rows }) => {
      const probe = { tasks: [], dropAt: null, countAt: null, fullAt: null, rowsAt: null, entry: null };
      window.__bench = probe;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) probe.tasks.push({ start: e.startTime, ms: e.duration });
      }).observe({ type: 'longtask', buffered: false });
      // Capture phase on the document: runs before the Dashboard's own handler.
      document.addEventListener(
        'drop',
        (e) => {
          probe.dropAt ??= performance.now();
          const entry = e.dataTransfer?.items[0]?.webkitGetAsEntry?.();
          probe.entry = entry ? { isDirectory: entry.isDirectory, name: entry.name } : null;
        },
        true,
      );
      const checks = [
        ['countAt', new Function(`return ${count}`)],
        ['fullAt', new Function(`return ${full}`)],
        ['rowsAt', new Function(`return ${rows}`)],
      ];
      const frame = () => {
        const now = performance.now();
        if (probe.dropAt !== null)
          for (const [key, check] of checks) if (probe[key] === null && check()) probe[key] = now;
        if (checks.some(([key]) => probe[key] === null)) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }, page);
    const box = await tab.locator(page.target).first().boundingBox();
    if (!box) throw new Error(`${name}: no drop target ${page.target}`);
    const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    const cdp = await tab.context().newCDPSession(tab);
    const data = { items: [], files: [dir], dragOperationsMask: 1 };
    for (const type of ['dragEnter', 'dragOver', 'drop'])
      await cdp.send('Input.dispatchDragEvent', { type, ...at, data });
    await tab.waitForFunction(page.settled, undefined, { timeout: 300_000, polling: 100 });
    await tab.waitForFunction('window.__bench.fullAt !== null && window.__bench.rowsAt !== null', undefined, {
      timeout: 120_000,
    });
    const settledAt = await tab.evaluate(() => performance.now());
    // A quiet second after settling, so trailing work (writes, thumbnails) is counted too.
    await tab.waitForTimeout(1000);
    const probe = await tab.evaluate(() => window.__bench);
    const since = probe.tasks.filter((t) => t.start + t.ms >= probe.dropAt);
    const round = (v) => (v === null ? null : Math.round(v));
    const dropTask = since.find((t) => t.start <= probe.dropAt && t.start + t.ms >= probe.dropAt);
    console.log(
      JSON.stringify({
        page: name,
        files: count,
        folderEntry: probe.entry?.isDirectory === true,
        firstCountMs: round(probe.countAt - probe.dropAt),
        firstRowsMs: round(probe.rowsAt - probe.dropAt),
        fullCountMs: round(probe.fullAt - probe.dropAt),
        settledMs: round(settledAt - probe.dropAt),
        longestTaskMs: round(Math.max(0, ...since.map((t) => t.ms))),
        tasksOver100Ms: since.filter((t) => t.ms > 100).length,
        // Long tasks only (over 50 ms): 0 when the drop's task was shorter.
        dropTaskAfterEventMs: dropTask ? round(dropTask.start + dropTask.ms - probe.dropAt) : 0,
      }),
    );
    await cdp.detach();
    await close();
  }
} finally {
  await driver.close();
}
