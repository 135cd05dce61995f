// Does Ferry's page keep painting while it reads the sizes of 10,000 picked files? Picks
// BENCH_FILES (10,000) real files (tmpfs) through the Dashboard's <input type=file> in headless
// Chromium and measures inside the page, never through a round trip from the driver (which waits
// behind the page's own work), from the input's change event:
// - frames per second over the first 4 s (a requestAnimationFrame counter) and until every size
//   is known;
// - the longest main-thread task after the change task (PerformanceObserver 'longtask'), and the
//   page's part of the change task (Chromium makes the File objects before the event: not the
//   page's);
// - an application's timer: every 20 ms a `setTimeout(0)` is armed and its delay recorded (max);
// - the same tasks and timer over a tail of TAIL_MS (2,000) after the window and the last size,
//   while recovery writes the records and copies the bytes of what was picked (`tail...`);
// - every size read: time until the last size is known, against a bare loop reading `size` of the
//   same files picked into a plain input of the same tab (fresh File objects, so each read is
//   Chromium's disk lookup): `sizesOverBare`, against the mean of two bare loops. After a warm-up
//   pick, even reps run bare, Ferry, bare and odd reps Ferry, bare, bare, so neither the bare
//   loop nor Ferry's pick always goes first (`order` in each line); a bare loop after Ferry's pick
//   waits until recovery has written and copied what the pick gave it. And the floor of reading
//   while painting: the same reads in 8 ms MessageChannel slices beside a requestAnimationFrame
//   loop, no library (`slicedMs`, first in even reps, last in odd ones): `sizesOverSliced`.
// PAGES=label=dir,label=dir?query (default: this checkout's build) compares builds (or a page's
// diagnosis queries, e.g. `?recovery=off`) in one run, each rep alternating them; REPS (6).
// Prints one JSON line per page and rep (with the load average before and after it), then per
// page the median of each figure and how many picks met `sizesOverBare <= 1.2`.
// PROFILE=1: a CPU profile of the first pick of each page (see profile.mjs; build with
// BENCH_MINIFY=0), written to RESULTS_DIR/paint-<page>.cpuprofile, its summary on stderr;
// TRACE=1 the same with a Chromium trace (paint-<page>.trace.json).
// Goal (issue 28): >= 50 fps over the first 4 s, no task over 50 ms, timer delay <= 50 ms,
// sizesOverBare <= 1.2. Figures only; never fails on timing.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { resultsDir, startPageDriver } from '../support/page.ts';
import { smallFiles } from './files.mjs';
import { startProfile, startTrace } from './profile.mjs';

const results = resultsDir('paint.mjs RESULTS_DIR (bench/dashboard/run.sh builds the page and runs this)');
const count = Number(process.env.BENCH_FILES ?? 10_000);
const reps = Number(process.env.REPS ?? 6);
const profiling = process.env.PROFILE === '1' ? startProfile : process.env.TRACE === '1' ? startTrace : undefined;
const pages = (process.env.PAGES ?? `ferry=${join(results, 'ferry-full')}`).split(',').map((p) => {
  const at = p.indexOf('=');
  const [dir, query] = p.slice(at + 1).split('?');
  return { label: p.slice(0, at), dir, query: query ? `?${query}` : '' };
});
const windowMs = 4000;
/**
 * After the window (or the last size, if later), how long the pick is still watched (TAIL_MS, ms):
 * recovery writes a large batch's records and copies its bytes once every size is read.
 */
const tailMs = Number(process.env.TAIL_MS ?? 2000);

/** Arms the in-page probes; runs in the page. */
function arm({ count, windowMs, tailMs }) {
  const bare = document.createElement('input');
  bare.type = 'file';
  bare.multiple = true;
  bare.id = 'bench-bare';
  document.body.append(bare);
  // The count as the toolbar shows it (grouped digits or not), and the first rows.
  const shown = () =>
    (document.querySelector('.ferry-toolbar-title')?.textContent ?? '').replace(/\D/g, '').includes(String(count)) &&
    document.querySelector('[data-testid=ferry-file]') !== null;
  const probe = {
    bareMs: [],
    slicedMs: null,
    slicedFrames: 0,
    changeAt: null,
    countAt: null,
    sizedAt: null,
    frames: [],
    tasks: [],
    timers: [],
  };
  window.__bench = probe;
  // The floor of reading sizes while painting: the same bare reads in 8 ms slices, each resumed
  // from one MessageChannel, while a requestAnimationFrame loop keeps frames coming (no store,
  // no recovery, no rendering of rows): what the browser itself makes of the lookups then.
  const sliced = document.createElement('input');
  sliced.type = 'file';
  sliced.multiple = true;
  sliced.id = 'bench-sliced';
  document.body.append(sliced);
  sliced.addEventListener('change', () => {
    const files = Array.from(sliced.files ?? []);
    const start = performance.now();
    const channel = new MessageChannel();
    let next = 0;
    let sum = 0;
    let reading = true;
    const frame = () => {
      probe.slicedFrames += 1;
      if (reading) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    channel.port1.onmessage = () => {
      const from = performance.now();
      while (next < files.length && performance.now() - from < 8) sum += files[next++].size;
      if (next < files.length) return channel.port2.postMessage(null);
      reading = false;
      probe.slicedMs = performance.now() - start;
      probe.slicedSum = sum;
      channel.port1.close();
      sliced.value = '';
    };
    channel.port2.postMessage(null);
  });
  // The reference: every size read in one bare loop, right in the change handler.
  bare.addEventListener('change', () => {
    const files = Array.from(bare.files ?? []);
    const start = performance.now();
    let sum = 0;
    for (const f of files) sum += f.size;
    probe.bareMs.push(performance.now() - start);
    probe.bareSum = sum;
    bare.value = '';
  });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.tasks.push({ start: e.startTime, ms: e.duration });
  }).observe({ type: 'longtask', buffered: false });
  // Capture phase on the document, Ferry's input only: runs before the Dashboard's handler.
  document.addEventListener(
    'change',
    (e) => {
      if (e.target === bare || e.target === sliced || probe.changeAt !== null) return;
      probe.changeAt = performance.now();
      performance.mark('bench-change');
      const frame = () => {
        const now = performance.now();
        probe.frames.push(now);
        if (probe.countAt === null && shown()) probe.countAt = now;
        if (now - probe.changeAt < windowMs + tailMs || probe.sizedAt === null) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
      // The application's timer: armed from an interval (no nesting clamp), delay recorded.
      const timer = setInterval(() => {
        const armed = performance.now();
        setTimeout(() => probe.timers.push([armed, performance.now() - armed]), 0);
        if (armed - probe.changeAt > windowMs + tailMs && probe.sizedAt !== null) clearInterval(timer);
      }, 20);
      const sized = (s) => {
        if (probe.sizedAt === null && s.fileIds.length === count && s.sizesPending === 0) {
          probe.sizedAt = performance.now();
          performance.mark('bench-sized');
        }
      };
      window.ferry.subscribe(sized);
    },
    true,
  );
}

/** The middle value (the mean of the two middle ones for an even count). */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? null : s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const round = (v, d = 0) => (v === null || v === undefined ? null : Math.round(v * 10 ** d) / 10 ** d);

const { paths } = await smallFiles(count);
const driver = await startPageDriver();
const rows = new Map(pages.map((p) => [p.label, []]));
try {
  for (let rep = 0; rep < reps; rep += 1) {
    for (const page of rep % 2 === 0 ? pages : [...pages].reverse()) {
      // ?recovery stays on: the page as shipped (recovery copies small files once sized).
      const { tab, close } = await driver.open(page.dir, '!!window.ferry', page.query);
      await tab.evaluate(arm, { count, windowMs, tailMs });
      // A bare loop over the same files (after a warm-up pick: the first pick of a tab pays more).
      const bareLoop = async (n) => {
        await tab.locator('#bench-bare').setInputFiles(paths, { timeout: 300_000 });
        await tab.waitForFunction(`window.__bench.bareMs.length === ${n}`, undefined, {
          timeout: 300_000,
          polling: 200,
        });
        await tab.waitForTimeout(500);
      };
      const pick = async () => {
        const profile = profiling && rep < pages.length ? await profiling(tab) : undefined;
        const startedAt = profile ? await tab.evaluate(() => performance.now()) : 0;
        await tab
          .locator('.ferry-dashboard input[type=file]:not([webkitdirectory])')
          .first()
          .setInputFiles(paths, { timeout: 300_000 });
        // Until the tail after the window (and the last size) is over: recovery writes the batch's
        // records and copies its bytes then, in tasks the page's goal counts too.
        await tab.waitForFunction(
          `window.__bench.sizedAt !== null && performance.now() - Math.max(window.__bench.sizedAt, window.__bench.changeAt + ${windowMs}) > ${tailMs}`,
          undefined,
          { timeout: 300_000, polling: 200 },
        );
        if (profile) {
          const [changeAt, sizedAt, tasks] = await tab.evaluate(() => [
            window.__bench.changeAt,
            window.__bench.sizedAt,
            window.__bench.tasks,
          ]);
          const span = { from: changeAt - startedAt, to: sizedAt - startedAt };
          // Every task over 50 ms after the change event, in the profile's time, with its start after the change.
          const long = tasks
            .filter((t) => t.start >= changeAt && t.ms > 50)
            .map((t) => ({ from: t.start - startedAt, to: t.start + t.ms - startedAt, after: t.start - changeAt }));
          const name = `paint-${page.label}.${process.env.TRACE === '1' ? 'trace.json' : 'cpuprofile'}`;
          const lines = await profile.stop(join(results, name), span, long);
          for (const line of lines) console.error(`[${page.label}] ${line}`);
        }
        // Recovery writes the pick's records and copies its bytes once sized: a bare loop beside
        // them waits on the same browser process (up to 3x slower), so it runs after them.
        await tab.evaluate(() => window.ferry.recovery?.flush());
      };
      const slicedLoop = async () => {
        await tab.locator('#bench-sliced').setInputFiles(paths, { timeout: 300_000 });
        await tab.waitForFunction('window.__bench.slicedMs !== null', undefined, { timeout: 300_000, polling: 200 });
        await tab.waitForTimeout(500);
      };
      const loadBefore = loadavg()[0];
      await bareLoop(1); // warm-up, not counted
      const order = rep % 2 === 0 ? 'sliced,bare,ferry,bare' : 'ferry,bare,bare,sliced';
      if (rep % 2 === 0) {
        await slicedLoop();
        await bareLoop(2);
        await pick();
        await bareLoop(3);
      } else {
        await pick();
        await bareLoop(2);
        await bareLoop(3);
        await slicedLoop();
      }
      const p = await tab.evaluate(() => window.__bench);
      const bareMs = (p.bareMs[1] + p.bareMs[2]) / 2;
      await close();
      const end = p.changeAt + windowMs;
      const inWindow = p.frames.filter((t) => t <= end);
      const untilSized = p.frames.filter((t) => t <= p.sizedAt);
      const changeTask = p.tasks.find((t) => t.start <= p.changeAt && t.start + t.ms >= p.changeAt);
      // Tasks of the page's pick only: the bare loop after it is the reference's.
      const after = p.tasks.filter(
        (t) => t !== changeTask && t.start >= p.changeAt && t.start <= Math.max(p.sizedAt, end),
      );
      const sizedMs = p.sizedAt - p.changeAt;
      // The tail: after the window and the last size, while recovery writes what the pick gave it.
      const tailFrom = Math.max(p.sizedAt, end);
      const tail = p.tasks.filter((t) => t.start > tailFrom && t.start <= tailFrom + tailMs);
      const timers = p.timers.filter(([at]) => at <= tailFrom).map(([, ms]) => ms);
      const tailTimers = p.timers.filter(([at]) => at > tailFrom).map(([, ms]) => ms);
      const row = {
        page: page.label,
        rep,
        order,
        load: [round(loadBefore, 1), round(loadavg()[0], 1)],
        files: count,
        countMs: round(p.countAt - p.changeAt),
        fps4s: round(inWindow.length / (windowMs / 1000), 1),
        fpsUntilSized: round(untilSized.length / (sizedMs / 1000), 1),
        longestFrameGapMs: round(Math.max(0, ...inWindow.slice(1).map((t, i) => t - inWindow[i]))),
        changeTaskPageMs: changeTask ? round(changeTask.start + changeTask.ms - p.changeAt) : 0,
        longestTaskAfterMs: round(Math.max(0, ...after.map((t) => t.ms))),
        tasksOver50Ms: after.filter((t) => t.ms > 50).length,
        // Where they were: ms after the change event, and how long (the last size came at sizedMs).
        tasksOver50At: after.filter((t) => t.ms > 50).map((t) => [round(t.start - p.changeAt), round(t.ms)]),
        timerMaxMs: round(Math.max(0, ...timers)),
        timerP95Ms: round([...timers].sort((a, b) => a - b)[Math.floor(timers.length * 0.95)] ?? null),
        // The TAIL_MS after the window and the last size: tasks over 50 ms ([ms after the change, ms]), timer max.
        tailTasksOver50At: tail.filter((t) => t.ms > 50).map((t) => [round(t.start - p.changeAt), round(t.ms)]),
        tailTimerMaxMs: round(Math.max(0, ...tailTimers)),
        sizedMs: round(sizedMs),
        bareMs: round(bareMs),
        bareEachMs: p.bareMs.map((v) => round(v)),
        sizesOverBare: round(sizedMs / bareMs, 2),
        slicedMs: round(p.slicedMs),
        slicedFps: round(p.slicedFrames / (p.slicedMs / 1000), 1),
        slicedOverBare: round(p.slicedMs / bareMs, 2),
        sizesOverSliced: round(sizedMs / p.slicedMs, 2),
      };
      rows.get(page.label)?.push(row);
      console.log(JSON.stringify(row));
    }
  }
  for (const [label, list] of rows) {
    const m = (k) => median(list.map((r) => r[k]));
    console.log(
      JSON.stringify({
        page: label,
        median: true,
        reps: list.length,
        fps4s: m('fps4s'),
        longestTaskAfterMs: m('longestTaskAfterMs'),
        changeTaskPageMs: m('changeTaskPageMs'),
        timerMaxMs: m('timerMaxMs'),
        tailTimerMaxMs: m('tailTimerMaxMs'),
        picksWithTailTaskOver50: list.filter((r) => r.tailTasksOver50At.length > 0).length,
        sizesOverBare: round(m('sizesOverBare'), 2),
        summedOverBare: round(list.reduce((a, r) => a + r.sizedMs, 0) / list.reduce((a, r) => a + r.bareMs, 0), 2),
        sizesOverBareEach: list.map((r) => r.sizesOverBare),
        slicedOverBare: round(m('slicedOverBare'), 2),
        sizesOverSliced: round(m('sizesOverSliced'), 2),
        sizesOverSlicedEach: list.map((r) => r.sizesOverSliced),
        within1_2: list.filter((r) => r.sizesOverBare <= 1.2).length,
        // Picks meeting each goal (tasks and the timer: the window, until the last size, and the tail).
        goals: {
          fps50: list.filter((r) => r.fps4s >= 50).length,
          noTaskOver50: list.filter((r) => r.tasksOver50Ms === 0 && r.tailTasksOver50At.length === 0).length,
          timer50: list.filter((r) => r.timerMaxMs <= 50 && r.tailTimerMaxMs <= 50).length,
          sizes1_2: list.filter((r) => r.sizesOverBare <= 1.2).length,
        },
        sizedMs: m('sizedMs'),
        bareMs: m('bareMs'),
        countMs: m('countMs'),
        load: [list[0]?.load[0], list.at(-1)?.load[1]],
      }),
    );
  }
} finally {
  await driver.close();
}
