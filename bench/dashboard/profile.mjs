// PROFILE=1 in paint.mjs: a CPU profile of the page (Chrome DevTools Protocol `Profiler`) from
// just before a pick until its last size is known, written beside the results, and where the
// time went: self time of the heaviest functions, and inclusive time of the parts that compete
// with the size lookups (each sample charged once, to the first part in `parts` that any frame of
// its stack names). Build the page with BENCH_MINIFY=0 so that function names are readable.
import { writeFile } from 'node:fs/promises';

/**
 * The parts, in the order they are tried: a sample is charged to the first part any frame of its
 * stack names (a React render inside a size commit is React's, a commit's reduce is the store's).
 * Names are the engine's and React's own (unminified build).
 */
const parts = [
  ['size lookups (admitSize)', ['admitSize']],
  ['recovery: write records (journal #take / #drain / db)', ['#take', '#drain', 'write', 'writeNow', 'saved']],
  ['recovery: copy bytes', ['#copyQueued', 'keepSmall', 'keep', '#nextCopies', '#kept']],
  ['recovery: compare store (journal #observe)', ['#observe', 'observeNow']],
  ['store: reduce a commit', ['reduce']],
  [
    'React render/commit',
    [
      'performWorkOnRoot',
      'performSyncWorkOnRoot',
      'flushSyncWorkAcrossRoots_impl',
      'processRootScheduleInMicrotask',
      'performWorkOnRootViaSchedulerTask',
      'commitRoot',
      'workLoopSync',
      'workLoopConcurrentByScheduler',
      'renderRootSync',
      'renderRootConcurrent',
      'forceStoreRerender',
      'subscribeToStore',
      'checkIfSnapshotChanged',
    ],
  ],
  ['store listeners (other)', ['dispatch']],
  ['slicer (#slice / #run, own time)', ['#slice', '#run', 'defaultYield', 'read', '#read', '#commit', 'commit']],
];

export async function startProfile(tab) {
  const cdp = await tab.context().newCDPSession(tab);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  await cdp.send('Profiler.start');
  return {
    /**
     * `span`: from the change event to the last size, in ms since the profiler started; `long`:
     * the page's tasks over 50 ms (`from`, `to` in the same time, `after` the change event).
     */
    async stop(path, span, long = []) {
      const { profile } = await cdp.send('Profiler.stop');
      await cdp.send('Profiler.disable');
      await cdp.detach();
      await writeFile(path, JSON.stringify(profile));
      const lines = summary(profile, span);
      for (const task of long) {
        lines.push(`long task ${(task.to - task.from).toFixed(0)} ms at ${task.after.toFixed(0)} ms after the change:`);
        lines.push(
          ...summary(profile, task, 12)
            .slice(1)
            .map((l) => `  ${l}`),
        );
      }
      return lines;
    },
  };
}

/** Lines saying where the profile's time went. */
export function summary(profile, span, top = 30) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  const inPart = new Map(parts.map(([label]) => [label, 0]));
  let total = 0;
  let busy = 0;
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (span && (at / 1000 < span.from || at / 1000 > span.to)) return;
    total += dt;
    const node = byId.get(id);
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    if (name !== '(idle)') busy += dt;
    const key = `${name} ${url.split('/').pop()}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    const stack = [];
    for (let at = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at).callFrame.functionName);
    const part = parts.find(([, names]) => stack.some((f) => names.includes(f)));
    if (part) inPart.set(part[0], inPart.get(part[0]) + dt);
    else if (name !== '(idle)') inPart.set(`other: ${name}`, (inPart.get(`other: ${name}`) ?? 0) + dt);
  });
  const ms = (us) => `${(us / 1000).toFixed(0).padStart(6)} ms`;
  const pct = (us) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const lines = [
    `profile from the change event to the last size: ${ms(total)} in all, ${ms(busy)} busy (shares below are of busy time)`,
  ];
  lines.push('by part (inclusive, in the order of `parts`):');
  const others = [...inPart.entries()].filter(([k]) => k.startsWith('other: ')).sort((a, b) => b[1] - a[1]);
  for (const [label, us] of [...inPart.entries()].filter(([k]) => !k.startsWith('other: ')))
    lines.push(`  ${ms(us)} ${pct(us)}  ${label}`);
  for (const [label, us] of others.slice(0, 8)) lines.push(`  ${ms(us)} ${pct(us)}  ${label}`);
  lines.push('heaviest functions (self):');
  for (const [key, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`  ${ms(us)} ${pct(us)}  ${key}`);
  return lines;
}

/**
 * TRACE=1 in paint.mjs: a Chromium trace over the same span, and the busiest renderer main
 * thread's time by event name (self time): what the CPU profile shows only as "(program)"
 * (style, layout, paint, the browser's messages).
 */
export async function startTrace(tab) {
  const cdp = await tab.context().newCDPSession(tab);
  const events = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
  const complete = new Promise((ok) => cdp.once('Tracing.tracingComplete', ok));
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: {
      includedCategories: [
        'toplevel',
        'devtools.timeline',
        'blink',
        'blink.user_timing',
        'v8',
        'disabled-by-default-devtools.timeline',
      ],
    },
  });
  return {
    async stop(path) {
      await cdp.send('Tracing.end');
      await complete;
      await cdp.detach();
      await writeFile(path, JSON.stringify({ traceEvents: events }));
      // The span is read from the page's own marks in the trace.
      return [...traceSummary(events), ...traceLongTasks(events)];
    },
  };
}

/**
 * The renderer main thread with the most events, from the page's `bench-change` mark to its
 * `bench-sized` mark: its busy time, then event names by self time.
 */
function traceSummary(all, top = 30) {
  const mark = (name) => all.find((e) => e.name === name)?.ts;
  const from = mark('bench-change') ?? Number.NEGATIVE_INFINITY;
  const to = mark('bench-sized') ?? Number.POSITIVE_INFINITY;
  const events = all.filter((e) => e.ph === 'M' || (e.ts >= from && e.ts <= to));
  const names = new Map();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}/${e.tid}`, e.args.name);
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || typeof e.dur !== 'number') continue;
    const key = `${e.pid}/${e.tid}`;
    if (names.get(key) !== 'CrRendererMain') continue;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  let best;
  for (const [key, list] of byThread) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const self = new Map();
    const count = new Map();
    const stack = [];
    let total = 0;
    for (const e of list) {
      while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
      const parent = stack.at(-1);
      if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur);
      else total += e.dur;
      self.set(e.name, (self.get(e.name) ?? 0) + e.dur);
      count.set(e.name, (count.get(e.name) ?? 0) + 1);
      stack.push(e);
    }
    if (!best || total > best.total) best = { key, total, self, count };
  }
  if (!best) return ['trace: no renderer main thread'];
  const lines = [
    `trace from the change event to the last size (${((to - from) / 1000).toFixed(0)} ms): renderer main thread ${best.key} busy ${(best.total / 1000).toFixed(0)} ms; self time by event:`,
  ];
  for (const [name, us] of [...best.self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`  ${(us / 1000).toFixed(1).padStart(8)} ms  x${best.count.get(name)}  ${name}`);
  return lines;
}

/**
 * The renderer main thread's top-level tasks over 50 ms from the page's `bench-change` mark to the
 * end of the trace, each with its events by self time (a script's function and source line named).
 */
function traceLongTasks(all, top = 12) {
  const from = all.find((e) => e.name === 'bench-change')?.ts ?? Number.NEGATIVE_INFINITY;
  const main = new Set(
    all
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args.name === 'CrRendererMain')
      .map((e) => `${e.pid}/${e.tid}`),
  );
  const byThread = new Map();
  for (const e of all) {
    const key = `${e.pid}/${e.tid}`;
    if (e.ph !== 'X' || typeof e.dur !== 'number' || !main.has(key) || e.ts < from) continue;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  const lines = [];
  for (const list of byThread.values()) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const tasks = list.filter((e) => e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask');
    for (const task of tasks) {
      if (task.dur < 50_000) continue;
      const inside = list.filter((e) => e !== task && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur);
      const self = new Map();
      const stack = [];
      for (const e of inside) {
        while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
        const name = label(e);
        const parent = stack.at(-1);
        if (parent) self.set(label(parent), (self.get(label(parent)) ?? 0) - e.dur);
        self.set(name, (self.get(name) ?? 0) + e.dur);
        stack.push(e);
      }
      lines.push(
        `trace: task of ${(task.dur / 1000).toFixed(1)} ms at ${((task.ts - from) / 1000).toFixed(0)} ms after the change; self time by event:`,
      );
      for (const [name, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
        lines.push(`  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`);
    }
  }
  return lines.length > 0 ? lines : ['trace: no task over 50 ms after the change'];
}

/** An event's name, with the function and source line a script event ran. */
function label(e) {
  const d = e.args?.data;
  if (d?.functionName !== undefined || d?.url)
    return `${e.name} ${d.functionName ?? ''} ${String(d.url ?? '')
      .split('/')
      .pop()}:${d.lineNumber ?? ''}`;
  return e.name;
}
