/** Starts the real `ferry` binary on a free loopback port with a temporary data directory. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '..', '..');

/** The binary under test: `FERRY_BIN`, else the debug build. */
export const ferryBin = process.env.FERRY_BIN ?? join(repoRoot, 'target', 'debug', 'ferry');

export interface RunningFerry {
  /** `http://127.0.0.1:PORT` */
  url: string;
  dataDir: string;
  process: ChildProcess;
  /** Stops the process (by its PID) and removes the data directory. */
  stop(): Promise<void>;
}

/** Where the process runs: another binary (default {@link ferryBin}) and working directory. */
export interface StartOptions {
  bin?: string;
  cwd?: string;
  /** `stop()` leaves the data directory for the caller to remove (benchmarks remove theirs at the end). */
  keepData?: boolean;
  /** Serve this existing data directory (a restart) instead of a fresh one. */
  dataDir?: string;
}

export async function startFerry(extraArgs: string[] = [], options: StartOptions = {}): Promise<RunningFerry> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'ferry-e2e-')));
  const bin = options.bin ?? ferryBin;
  const child = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir, ...extraArgs], {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FERRY_LOG: process.env.FERRY_LOG ?? 'warn' },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = await new Promise<string>((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`ferry did not start in 20 s: ${stderr}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^/\s]+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        ok(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`ferry exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    dataDir,
    process: child,
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) {
        const exited = new Promise((ok) => child.once('exit', ok));
        process.kill(child.pid, 'SIGTERM');
        await exited;
      }
      if (!options.keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface StoredUpload {
  id: string;
  filename: string | undefined;
  sha256: string;
  size: number;
}

/** Every finished or partial tus upload on disk, with the digest of its stored bytes. */
export async function storedTusUploads(dataDir: string): Promise<StoredUpload[]> {
  const dir = join(dataDir, 'tus');
  const names = await readdir(dir);
  const uploads: StoredUpload[] = [];
  for (const name of names.filter((n) => n.endsWith('.info'))) {
    const id = name.slice(0, -'.info'.length);
    const info = JSON.parse(await readFile(join(dir, name), 'utf8')) as {
      metadata: Record<string, number[] | null>;
    };
    const raw = info.metadata.filename;
    const bytes = await readFile(join(dir, id));
    uploads.push({
      id,
      filename: raw ? Buffer.from(raw).toString('utf8') : undefined,
      sha256: sha256(bytes),
      size: bytes.length,
    });
  }
  return uploads;
}
