/**
 * The @ferry/core test page (e2e/pages/core): built once with Vite into a temporary directory
 * that `ferry serve --ui-dir` then serves, so the page and the endpoints share one origin.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build, defaultClientConditions } from 'vite';
import type { RunningFerry } from './ferry.ts';

export const corePageRoot = resolve(import.meta.dirname, '..', 'pages', 'core');

/** Builds the page; returns its directory and a function removing it. */
export async function buildCorePage(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-core-page-'));
  await build({
    root: corePageRoot,
    logLevel: 'error',
    configFile: false,
    // @ferry/core from its sources, as in development.
    resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
    build: { outDir: dir, emptyOutDir: true, minify: false },
  });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The bytes of the page's `patternFile(name, size, seed)`. */
export function patternBytes(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 31 + seed + (i >> 13)) & 255;
  return bytes;
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Stops a ferry started by a spec; if a lingering connection keeps its graceful shutdown from
 * finishing within 10 s, kills it (by its PID) so no server outlives the spec.
 */
export async function stopFerryFirmly(ferry: RunningFerry): Promise<void> {
  const timer = setTimeout(() => ferry.process.kill('SIGKILL'), 10_000);
  try {
    await ferry.stop();
  } finally {
    clearTimeout(timer);
  }
}
