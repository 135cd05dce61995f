// The benchmark's picked and dropped files: `count` small real files in one directory on tmpfs
// (BENCH_TMPFS, default /dev/shm), made once and kept, so the figures are Chromium's and the
// page's, not the disk's. input.mjs picks them through the file input; drop.mjs drops the folder.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The directory of `count` small files, and their paths in name order. */
export async function smallFiles(count) {
  const dir = join(process.env.BENCH_TMPFS ?? '/dev/shm', `ferry-bench-input-${count}`);
  await mkdir(dir, { recursive: true });
  const have = new Set(await readdir(dir));
  const paths = [];
  for (let i = 0; i < count; i += 1) {
    const name = `file-${String(i).padStart(5, '0')}.txt`;
    if (!have.has(name)) await writeFile(join(dir, name), `#${i}\n`);
    paths.push(join(dir, name));
  }
  return { dir, paths };
}
