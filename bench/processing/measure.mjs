// bench/processing's driver (run.sh says what each phase measures). Phases:
//   images FERRY PID DIR CONC SHARP_OUT   ferry's Assemblies, then sharp in a child process
//   sharp DIR CONC OUT                    (the child) sharp alone; prints its figures as JSON
//   video FERRY PID CLIP LOG BY_HAND REPS pairs of one video Assembly and ferry's ffmpeg commands by hand
//   burst FERRY PID DIR                   many Assemblies at once
// Every Assembly's outputs are checked (count and dimensions) before a figure is printed.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, openAsBlob, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

const KEY = 'bench-key';
const [phase, ...args] = process.argv.slice(2);

const ms = (t) => `${t.toFixed(0)} ms`;
const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Resident KiB of PID and every process descending from it (ferry and its engine children). */
function treeRssKib(root) {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  let total = 0;
  for (const pid of parent.keys()) {
    let p = pid;
    while (p && p !== root) p = parent.get(p);
    if (p !== root) continue;
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      total += m ? Number(m[1]) : 0;
    } catch {}
  }
  return total;
}

/** Samples the tree's RSS every 10 ms until stopped; returns the peak in KiB. */
function peakSampler(pid) {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssKib(pid));
  }, 10);
  return () => {
    clearInterval(timer);
    return Math.max(peak, treeRssKib(pid));
  };
}

async function createAssembly(ferry, steps, file) {
  const form = new FormData();
  form.set('params', JSON.stringify({ auth: { key: KEY }, steps }));
  form.set('file', await openAsBlob(file), basename(file));
  const res = await fetch(`${ferry}/assemblies`, { method: 'POST', body: form });
  const body = await res.json();
  if (!res.ok || body.error) throw new Error(`create: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function settle(status) {
  const url = status.assembly_ssl_url;
  for (;;) {
    const s = await (await fetch(url)).json();
    if (s.error) throw new Error(`assembly ${s.assembly_id}: ${s.error} ${s.message}`);
    if (s.ok === 'ASSEMBLY_COMPLETED') return s;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Runs `work` over `items` with `conc` in flight; returns each item's latency in ms. */
async function pool(items, conc, work) {
  const latencies = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < items.length) {
        const item = items[next++];
        const t = performance.now();
        await work(item);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return latencies;
}

const IMAGE_STEPS = {
  thumb: {
    robot: '/image/resize',
    use: ':original',
    width: 320,
    height: 320,
    resize_strategy: 'fit',
    format: 'jpg',
    quality: 80,
  },
  large: { robot: '/image/resize', use: ':original', width: 1280, resize_strategy: 'fit', format: 'jpg', quality: 80 },
  webp: { robot: '/image/resize', use: ':original', width: 1280, resize_strategy: 'fit', format: 'webp', quality: 80 },
};
const WANTED_WIDTH = { thumb: 320, large: 1280, webp: 1280 };

function checkImageResults(s) {
  for (const [step, width] of Object.entries(WANTED_WIDTH)) {
    const out = s.results?.[step];
    if (out?.length !== 1 || out[0].meta?.width !== width) {
      throw new Error(`assembly ${s.assembly_id}: step ${step} gave ${JSON.stringify(out?.map((r) => r.meta))}`);
    }
  }
}

function report(name, n, wall, latencies, peakKib) {
  console.log(
    `  ${name.padEnd(6)} ${n} images in ${(wall / 1000).toFixed(2)} s = ${(n / (wall / 1000)).toFixed(2)} images/s; ` +
      `latency p50 ${ms(pct(latencies, 50))}, p99 ${ms(pct(latencies, 99))}; peak RSS ${mib(peakKib)}`,
  );
}

async function images(ferry, pid, dir, conc, sharpOut) {
  const files = readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
  console.log(`images: ${files.length} JPEGs, 3 outputs each, ${conc} in flight`);
  const stop = peakSampler(pid);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const latencies = await pool(files, conc, async (file) => {
    checkImageResults(await settle(await createAssembly(ferry, IMAGE_STEPS, file)));
  });
  const ferryWall = performance.now() - t0;
  const cpu1 = cpuSeconds(pid);
  const ferryPeak = stop();
  // The server's own CPU and its engine children's (none when every image resizes in process).
  const ferryCpu = cpu1.own - cpu0.own + (cpu1.children - cpu0.children);
  report('ferry', files.length, ferryWall, latencies, ferryPeak);

  const sharp = await new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [process.argv[1], 'sharp', dir, String(conc), sharpOut],
      { maxBuffer: 1 << 24 },
      (err, out) => (err ? reject(err) : resolve(JSON.parse(out))),
    ),
  );
  report('sharp', files.length, sharp.wall, sharp.latencies, sharp.peakKib);
  const perImage = (cpu) => `${((cpu / files.length) * 1000).toFixed(0)} ms`;
  console.log(
    `  CPU per image: ferry ${perImage(ferryCpu)} (${ferryCpu.toFixed(1)} s), ` +
      `sharp ${perImage(sharp.cpu)} (${sharp.cpu.toFixed(1)} s): ferry at ${(ferryCpu / sharp.cpu).toFixed(2)}x sharp's CPU`,
  );
  console.log(
    `  ratio: ferry at ${(sharp.wall / ferryWall).toFixed(2)}x sharp's throughput (goal >= 1.0x), ` +
      `${(ferryPeak / sharp.peakKib).toFixed(2)}x its peak memory (goal <= 1.0x)`,
  );
}

async function sharpAlone(dir, conc, out) {
  const { default: sharp } = await import('sharp');
  mkdirSync(out, { recursive: true });
  const start = process.resourceUsage();
  const cpu0 = start.userCPUTime + start.systemCPUTime;
  const files = readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
  const t0 = performance.now();
  const latencies = await pool(files, Number(conc), async (file) => {
    const src = sharp(file);
    const stem = join(out, basename(file, '.jpg'));
    const done = await Promise.all([
      src.clone().resize(320, 320, { fit: 'inside' }).jpeg({ quality: 80 }).toFile(`${stem}-thumb.jpg`),
      src.clone().resize({ width: 1280 }).jpeg({ quality: 80 }).toFile(`${stem}-large.jpg`),
      src.clone().resize({ width: 1280 }).webp({ quality: 80 }).toFile(`${stem}-webp.webp`),
    ]);
    const widths = done.map((d) => d.width);
    if (widths.join() !== '320,1280,1280') throw new Error(`sharp ${file}: widths ${widths}`);
  });
  const wall = performance.now() - t0;
  // CPU from before the first image: loading sharp is not counted, as ferry's start is not.
  const usage = process.resourceUsage();
  const cpu = (usage.userCPUTime + usage.systemCPUTime - cpu0) / 1e6;
  process.stdout.write(JSON.stringify({ wall, latencies, peakKib: usage.maxRSS, cpu }));
}

// ferry colours its log lines; the colour codes are dropped before parsing.
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The engine command lines ferry logged after byte OFFSET of its log. */
function engineCommands(log, offset) {
  const text = readFileSync(log, 'utf8').slice(offset).replace(ANSI_COLOUR, '');
  const commands = [];
  for (const line of text.split('\n')) {
    const m = /engine command program=(\S+) args=(\[.*\])\s*$/.exec(line);
    if (m) commands.push({ program: m[1], args: JSON.parse(m[2]) });
  }
  return commands;
}

function run(program, argv) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(program, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-2000);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(performance.now() - t) : reject(new Error(`${program}: ${code}: ${err}`)),
    );
  });
}

/**
 * CPU seconds of PID from /proc: its own (user + system) and its reaped children's. The
 * children's share counts every engine ferry ran and waited for, so the pair of figures is the
 * service's own work and the engines' work, whatever the machine's load does to wall time.
 */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14-17 of stat(5) (utime, stime, cutime, cstime) are f[11..14] after the name.
  const [utime, stime, cutime, cstime] = f.slice(11, 15).map(Number);
  const hz = 100; // USER_HZ, 100 on Linux for every architecture this runs on
  return { own: (utime + stime) / hz, children: (cutime + cstime) / hz };
}

/** One video Assembly through ferry: its wall time, peak RSS and the engine commands it ran. */
async function videoThroughFerry(ferry, pid, clip, log, steps) {
  const offset = statSync(log).size;
  const stop = peakSampler(pid);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const s = await settle(await createAssembly(ferry, steps, clip));
  const wall = performance.now() - t0;
  const cpu1 = cpuSeconds(pid);
  const peak = stop();
  if (s.results?.mp4?.length !== 1 || s.results?.thumbs?.length !== 3) {
    throw new Error(`video assembly results: ${JSON.stringify(Object.keys(s.results ?? {}))}`);
  }
  const commands = engineCommands(log, offset);
  if (!commands.some((c) => basename(c.program) === 'ffmpeg')) {
    throw new Error('no ffmpeg command in the log (FERRY_LOG must enable debug)');
  }
  return { wall, peak, commands, ownCpu: cpu1.own - cpu0.own, engineCpu: cpu1.children - cpu0.children };
}

/** ferry's engine commands rerun by hand, one after another: ffmpeg's and the probes' time. */
async function videoByHand(commands, byHand, rep) {
  mkdirSync(byHand, { recursive: true });
  const cpu0 = cpuSeconds(process.pid);
  let ffmpeg = 0;
  let probe = 0;
  for (const [i, c] of commands.entries()) {
    const argv = [...c.args];
    const isFfmpeg = basename(c.program) === 'ffmpeg';
    // The output is the last argument of an ffmpeg run: write it beside, not over ferry's.
    if (isFfmpeg) argv[argv.length - 1] = join(byHand, `${rep}-${i}-${basename(argv[argv.length - 1])}`);
    const took = await run(c.program, argv);
    if (isFfmpeg) ffmpeg += took;
    else probe += took;
  }
  return { ffmpeg, probe, cpu: cpuSeconds(process.pid).children - cpu0.children };
}

/**
 * REPS pairs of (ferry, by hand), the order alternating from pair to pair so a change in the
 * machine's load does not always fall on the same side; each pair gives a ratio, and the median
 * of those is the figure. The commands by hand are the ones ferry ran in the same pair.
 */
async function video(ferry, pid, clip, log, byHand, reps) {
  const steps = {
    mp4: { robot: '/video/encode', use: ':original', preset: 'web/mp4/1080p' },
    thumbs: { robot: '/video/thumbs', use: ':original', count: 3 },
  };
  console.log(
    `video: ${basename(clip)} (${(statSync(clip).size / 2 ** 20).toFixed(1)} MiB) to web/mp4/1080p and 3 thumbnails, ` +
      `${reps} pair(s) of ferry and the same commands by hand, alternating which goes first`,
  );
  const ratios = [];
  const cpuRatios = [];
  let commands = null;
  for (let rep = 0; rep < reps; rep++) {
    const handFirst = rep % 2 === 1 && commands !== null;
    const hand0 = handFirst ? await videoByHand(commands, byHand, rep) : null;
    const viaFerry = await videoThroughFerry(ferry, pid, clip, log, steps);
    commands = viaFerry.commands;
    const hand = hand0 ?? (await videoByHand(commands, byHand, rep));
    const ffmpegRuns = commands.filter((c) => basename(c.program) === 'ffmpeg').length;
    const ratio = viaFerry.wall / hand.ffmpeg;
    ratios.push(ratio);
    const cpuRatio = (viaFerry.ownCpu + viaFerry.engineCpu) / hand.cpu;
    cpuRatios.push(cpuRatio);
    console.log(
      `  pair ${rep + 1} (${handFirst ? 'by hand first' : 'ferry first'}, load ${loadAverage()}): ` +
        `ferry ${ms(viaFerry.wall)} (upload, probe, encode, thumbs; peak RSS of ferry and its engines ${mib(viaFerry.peak)}); ` +
        `by hand ${ffmpegRuns} ffmpeg command(s) ${ms(hand.ffmpeg)}, plus ${commands.length - ffmpegRuns} probe(s) ${ms(hand.probe)}; ` +
        `ratio ${ratio.toFixed(3)}x (${(viaFerry.wall / (hand.ffmpeg + hand.probe)).toFixed(3)}x with the probes); ` +
        `CPU: ferry itself ${viaFerry.ownCpu.toFixed(2)} s, its engines ${viaFerry.engineCpu.toFixed(2)} s, ` +
        `the commands by hand ${hand.cpu.toFixed(2)} s: ${cpuRatio.toFixed(3)}x`,
    );
  }
  console.log(
    `  ratio: ferry's wall time is ${median(ratios).toFixed(3)}x the ffmpeg commands by hand, median of ${reps} ` +
      `(each: ${ratios.map((r) => r.toFixed(3)).join(', ')}; goal <= 1.05x); ` +
      `CPU (ferry and its engines over the commands by hand) ${median(cpuRatios).toFixed(3)}x ` +
      `(each: ${cpuRatios.map((r) => r.toFixed(3)).join(', ')})`,
  );
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function burst(ferry, pid, dir) {
  const files = readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
  const steps = { thumb: IMAGE_STEPS.thumb };
  console.log(`burst: ${files.length} Assemblies posted at once, --assembly-workers 2`);
  const stop = peakSampler(pid);
  const t0 = performance.now();
  const outcomes = await Promise.allSettled(files.map(async (f) => settle(await createAssembly(ferry, steps, f))));
  const wall = performance.now() - t0;
  const peak = stop();
  const failed = outcomes.filter((o) => o.status === 'rejected');
  const done = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);
  const waits = done.map((s) => Date.parse(s.execution_start) - Date.parse(s.start_date));
  console.log(
    `  ${done.length} completed, ${failed.length} failed${failed.length ? ` (first: ${failed[0].reason})` : ''} in ${ms(wall)}; ` +
      `queue wait p50 ${ms(pct(waits, 50))}, max ${ms(Math.max(...waits))}; peak RSS of ferry and its engines ${mib(peak)}`,
  );
  if (failed.length) process.exitCode = 1;
}

const phases = {
  images: () => images(args[0], Number(args[1]), args[2], Number(args[3]), args[4]),
  sharp: () => sharpAlone(args[0], args[1], args[2]),
  video: () => video(args[0], Number(args[1]), args[2], args[3], args[4], Number(args[5] ?? 1)),
  burst: () => burst(args[0], Number(args[1]), args[2]),
};
if (!phases[phase]) throw new Error(`unknown phase ${phase}`);
await phases[phase]();
