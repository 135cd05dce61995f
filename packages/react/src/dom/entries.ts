/**
 * Files out of a drop or paste: plain files, and folders walked recursively through the
 * `webkitGetAsEntry` API, each file keeping its path inside the dropped folder (`relativePath`).
 * Framework-free; the dropzone and the paste handler use it.
 */
import type { FileDescriptor, FileHandleLike } from '@ferry/core';

/** The parts of `FileSystemEntry` used here (the DOM typings differ between TS versions). */
interface Entry {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  fullPath: string;
  file?(ok: (f: File) => void, fail: (e: unknown) => void): void;
  createReader?(): { readEntries(ok: (entries: Entry[]) => void, fail: (e: unknown) => void): void };
}

/** A file with the folder path it came from, if any. */
export function describe(file: File, relativePath?: string | null): FileDescriptor {
  const path = relativePath || (file as File & { webkitRelativePath?: string }).webkitRelativePath || undefined;
  return { data: file, name: file.name, type: file.type, source: 'local', relativePath: path || undefined };
}

function fileOf(entry: Entry): Promise<File | null> {
  return new Promise((ok) => {
    if (!entry.file) return ok(null);
    entry.file(ok, () => ok(null));
  });
}

/** All entries of a directory: `readEntries` answers in batches until it answers empty. */
async function childrenOf(entry: Entry): Promise<Entry[]> {
  const reader = entry.createReader?.();
  if (!reader) return [];
  const all: Entry[] = [];
  for (;;) {
    const batch = await new Promise<Entry[]>((ok) => reader.readEntries(ok, () => ok([])));
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

async function walk(entry: Entry, out: FileDescriptor[]): Promise<void> {
  if (entry.isFile) {
    const file = await fileOf(entry);
    // fullPath is "/folder/sub/name"; a file dropped alone has no folder to remember.
    const path = entry.fullPath.replace(/^\//, '');
    if (file) out.push(describe(file, path.includes('/') ? path : undefined));
  } else if (entry.isDirectory) {
    for (const child of await childrenOf(entry)) await walk(child, out);
  }
}

/** Chromium's `DataTransferItem.getAsFileSystemHandle` (not in TypeScript's DOM typings). */
type HandleItem = DataTransferItem & { getAsFileSystemHandle?(): Promise<{ kind: string } | null> };

/**
 * Every file of a DataTransfer (drop or paste), walking dropped folders. A file dropped alone
 * keeps its File System Access handle where the browser gives one, so recovery needs no copy.
 */
export async function filesFromDataTransfer(data: DataTransfer): Promise<FileDescriptor[]> {
  const items = Array.from(data.items ?? []).filter((item) => item.kind === 'file');
  const entries = items.map((item) =>
    typeof item.webkitGetAsEntry === 'function' ? (item.webkitGetAsEntry() as Entry | null) : null,
  );
  // Entries and handles must be asked for synchronously, before the event handler returns.
  const handles = items.map((item) => (item as HandleItem).getAsFileSystemHandle?.().catch(() => null) ?? null);
  if (entries.length > 0 && entries.every((e) => e !== null)) {
    const out: FileDescriptor[] = [];
    for (const [i, entry] of entries.entries()) {
      if (!entry) continue;
      const start = out.length;
      await walk(entry, out);
      const handle = entry.isFile ? await handles[i] : null;
      const first = out[start];
      if (first && handle?.kind === 'file') first.handle = handle as FileHandleLike;
    }
    return out;
  }
  return Array.from(data.files ?? [], (file) => describe(file));
}

/** Whether a drag carries files (rather than text or a link). */
export function hasFiles(data: DataTransfer | null): boolean {
  return !!data && Array.from(data.types ?? []).includes('Files');
}
