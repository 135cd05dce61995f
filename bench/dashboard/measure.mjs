// Times adding 10,000 files through the full Dashboard of each built page in headless Chromium:
// from the addFiles call until the Dashboard shows the 10,000 files. Prints JSON lines.
import { join } from 'node:path';
import { resultsDir, startPageDriver } from '../support/page.ts';

const results = resultsDir('measure.mjs RESULTS_DIR (bench/dashboard/run.sh builds the pages and runs this)');
const count = Number(process.env.BENCH_FILES ?? 10_000);

// What "the Dashboard shows them" means on each page.
const pages = {
  ferry: {
    add: 'window.ferry.addFiles(files)',
    scroller: '[data-testid=ferry-files]',
    shown: `document.querySelector('[data-testid=ferry-status]')?.textContent === '${count} files selected'`,
  },
  uppy: {
    add: 'window.uppy.addFiles(files)',
    scroller: '.uppy-Dashboard-files',
    shown: `(document.querySelector('.uppy-DashboardContent-title')?.textContent ?? '').includes('${count}')`,
  },
};

const driver = await startPageDriver();
try {
  for (const [name, page] of Object.entries(pages)) {
    const ready = name === 'ferry' ? '!!window.ferry' : '!!window.uppy';
    const { tab, close } = await driver.open(join(results, `${name}-full`), ready);
    const ms = await tab.evaluate(
      async ({ count, add, shown }) => {
        const files = Array.from({ length: count }, (_, i) => ({
          name: `file-${i}.txt`,
          type: 'text/plain',
          data: new File([`#${i}`], `file-${i}.txt`, { type: 'text/plain' }),
          source: 'local',
        }));
        const start = performance.now();
        new Function('files', add)(files);
        const isShown = new Function(`return ${shown}`);
        while (!isShown()) await new Promise((ok) => requestAnimationFrame(ok));
        // One more frame so the paint after the last change is included.
        await new Promise((ok) => requestAnimationFrame(ok));
        return performance.now() - start;
      },
      { count, ...page },
    );
    const rows = await tab.evaluate(
      () => document.querySelectorAll('[data-testid=ferry-file], .uppy-Dashboard-Item').length,
    );
    // Scrolling: 120 frames, each moving the list 300 px; frame times from rAF timestamps.
    const scroll = await tab.evaluate(async (selector) => {
      const el = document.querySelector(selector);
      if (!el) return null;
      const times = [];
      let last = await new Promise((ok) => requestAnimationFrame(ok));
      for (let i = 0; i < 120; i += 1) {
        el.scrollTop += 300;
        const now = await new Promise((ok) => requestAnimationFrame(ok));
        times.push(now - last);
        last = now;
      }
      times.sort((a, b) => a - b);
      return { p50: times[60], p95: times[114], max: times[119] };
    }, page.scroller);
    const round = (v) => Math.round(v * 10) / 10;
    const frames = scroll && { p50: round(scroll.p50), p95: round(scroll.p95), max: round(scroll.max) };
    console.log(
      JSON.stringify({ page: name, files: count, ms: Math.round(ms), rowsInDom: rows, scrollFrameMs: frames }),
    );
    await close();
  }
} finally {
  await driver.close();
}
