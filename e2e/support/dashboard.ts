/** Helpers the Dashboard specs share: stored tus metadata, page set-up, screenshots. */
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { repoRoot, sha256, storedTusUploads } from './ferry.ts';

export interface StoredWithMeta {
  filename: string | undefined;
  relativePath: string | undefined;
  /** The `name` metadata (what the companion sends for imported files). */
  name: string | undefined;
  sha256: string;
  size: number;
}

/** A file the demo page's engine holds (a capture, say), read out of the page. */
export interface EngineFile {
  sha: string;
  type: string;
  length: number;
  /** The first four bytes (a format's magic number). */
  head: number[];
  /** Width and height, for images. */
  dims: [number, number] | null;
}

/** The bytes, type and (for images) dimensions of the engine's file `name`. */
export async function engineFile(page: Page, name: string): Promise<EngineFile> {
  const got = await page.evaluate(async (n) => {
    const file = (window as { ferry?: import('@ferry/core').Ferry }).ferry?.getFiles().find((f) => f.name === n);
    if (!file?.data) throw new Error(`no file ${n} in the engine`);
    const buf = new Uint8Array(await file.data.arrayBuffer());
    let s = '';
    for (let i = 0; i < buf.length; i += 1) s += String.fromCharCode(buf[i] as number);
    let dims: [number, number] | null = null;
    if (file.type.startsWith('image/')) {
      const bitmap = await createImageBitmap(file.data);
      dims = [bitmap.width, bitmap.height];
    }
    return { b64: btoa(s), type: file.type, dims };
  }, name);
  const bytes = Buffer.from(got.b64, 'base64');
  return { sha: sha256(bytes), type: got.type, length: bytes.length, head: [...bytes.subarray(0, 4)], dims: got.dims };
}

/** Every stored tus upload with its filename and relativePath metadata. */
export async function storedWithMeta(dataDir: string): Promise<StoredWithMeta[]> {
  const stored = await storedTusUploads(dataDir);
  const out: StoredWithMeta[] = [];
  for (const s of stored) {
    const info = JSON.parse(await readFile(join(dataDir, 'tus', `${s.id}.info`), 'utf8')) as {
      metadata: Record<string, number[] | null>;
    };
    const text = (key: string) => {
      const raw = info.metadata[key];
      return raw ? Buffer.from(raw).toString('utf8') : undefined;
    };
    out.push({
      filename: s.filename,
      relativePath: text('relativePath'),
      name: text('name'),
      sha256: s.sha256,
      size: s.size,
    });
  }
  return out;
}

export { sha256 };

/** Waits until the status bar says `text`. */
export async function statusText(page: Page): Promise<string | null> {
  return page.getByTestId('ferry-status').textContent();
}

export const screenshotDir = join(repoRoot, 'e2e', 'screenshots');

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Serious and critical axe-core violations inside the Dashboard (and the modal, if open). */
export async function axeViolations(page: Page): Promise<string[]> {
  // Judge the settled page: mid-slide, panels are still partly transparent.
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> } }
    ).axe;
    const result = await axe.run({ include: [['.ferry-dashboard']] }, { resultTypes: ['violations'] });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
