/**
 * Files out of a drop or paste: plain files, and folders walked recursively through the
 * `webkitGetAsEntry` API, each file keeping its path inside the dropped folder (`relativePath`).
 * A folder's files come part by part as they are read ({@link walkDataTransfer}), or all at
 * once ({@link filesFromDataTransfer}). Framework-free; the dropzone and the paste handler use it.
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

type Reader = ReturnType<NonNullable<Entry['createReader']>>;

function readBatch(reader: Reader): Promise<Entry[]> {
  return new Promise<Entry[]>((ok) => reader.readEntries(ok, () => ok([])));
}

/** The descriptor of a file entry; fullPath is "/folder/sub/name", and a file alone has no folder. */
function describeEntry(entry: Entry, file: File): FileDescriptor {
  const path = entry.fullPath.replace(/^\//, '');
  return describe(file, path.includes('/') ? path : undefined);
}

/** Receives the files of a drop part by part, in order. */
export type FilesSink = (files: FileDescriptor[]) => void;

/**
 * How many `file()` calls are in flight at once. One at a time, each waits for the round trip
 * before the next is asked for (10,000 files: 10 s in Chromium). All of a batch at once, the
 * answers pile up and Chromium takes them in one task, each making its File with a synchronous
 * call to the browser (about 0.4 ms): a 10,000-file folder froze the page for 4 s. Eight keep
 * the browser busy (half the time of one at a time) and each task to a few ms.
 */
export const FILE_REQUESTS = 8;

/**
 * A folder's files, to `sink` part by part. `readEntries` answers about 100 entries at a time
 * until it answers empty, and each entry's File is one more round trip to the browser: 10,000
 * files take seconds, so each part is handed over as soon as its Files are made, and the next
 * batch of entries is asked for meanwhile.
 */
async function walkDirectory(dir: Entry, sink: FilesSink): Promise<void> {
  const reader = dir.createReader?.();
  if (!reader) return;
  let batch = await readBatch(reader);
  while (batch.length > 0) {
    const next = readBatch(reader);
    await walkBatch(batch, sink);
    batch = await next;
  }
}

/** The Files of file entries, {@link FILE_REQUESTS} at a time, to `sink` as each group is made. */
async function filesOfEntries(entries: readonly Entry[], sink: FilesSink): Promise<void> {
  for (let i = 0; i < entries.length; i += FILE_REQUESTS) {
    const group = entries.slice(i, i + FILE_REQUESTS);
    const files = await Promise.all(group.map(fileOf));
    const out: FileDescriptor[] = [];
    files.forEach((file, j) => {
      if (file) out.push(describeEntry(group[j] as Entry, file));
    });
    if (out.length > 0) sink(out);
  }
}

/**
 * One batch of a folder: the Files of consecutive file entries are asked for together; a
 * subfolder is walked where it stands, so files come in the order they are listed.
 */
async function walkBatch(entries: readonly Entry[], sink: FilesSink): Promise<void> {
  let run: Entry[] = [];
  const flush = async () => {
    const files = run;
    run = [];
    await filesOfEntries(files, sink);
  };
  for (const entry of entries) {
    if (entry.isFile) run.push(entry);
    else if (entry.isDirectory) {
      await flush();
      await walkDirectory(entry, sink);
    }
  }
  await flush();
}

/** Chromium's `DataTransferItem.getAsFileSystemHandle` (not in TypeScript's DOM typings). */
type HandleItem = DataTransferItem & { getAsFileSystemHandle?(): Promise<{ kind: string } | null> };

/**
 * Every file of a DataTransfer (drop or paste), walking dropped folders, handed to `sink` part
 * by part as it is read, in order; resolves when the last part has been handed over. A file
 * dropped alone keeps its File System Access handle where the browser gives one, so recovery
 * needs no copy. Call it from the event handler: entries are only given out during the event.
 */
export async function walkDataTransfer(data: DataTransfer, sink: FilesSink): Promise<void> {
  const items = Array.from(data.items ?? []).filter((item) => item.kind === 'file');
  const entries = items.map((item) =>
    typeof item.webkitGetAsEntry === 'function' ? (item.webkitGetAsEntry() as Entry | null) : null,
  );
  // Entries and handles must be asked for synchronously, before the event handler returns.
  const handles = items.map((item) => (item as HandleItem).getAsFileSystemHandle?.().catch(() => null) ?? null);
  if (entries.length > 0 && entries.every((e) => e !== null)) {
    for (const [i, entry] of entries.entries()) {
      if (entry?.isDirectory) await walkDirectory(entry, sink);
      else if (entry?.isFile) {
        const file = await fileOf(entry);
        if (!file) continue;
        const descriptor = describeEntry(entry, file);
        const handle = await handles[i];
        if (handle?.kind === 'file') descriptor.handle = handle as FileHandleLike;
        sink([descriptor]);
      }
    }
    return;
  }
  const files = Array.from(data.files ?? [], (file) => describe(file));
  if (files.length > 0) sink(files);
}

/** Every file of a DataTransfer (drop or paste), walking dropped folders, at once (see {@link walkDataTransfer}). */
export async function filesFromDataTransfer(data: DataTransfer): Promise<FileDescriptor[]> {
  const out: FileDescriptor[] = [];
  await walkDataTransfer(data, (files) => {
    for (const f of files) out.push(f);
  });
  return out;
}

/** Whether a drag carries files (rather than text or a link). */
export function hasFiles(data: DataTransfer | null): boolean {
  return !!data && Array.from(data.types ?? []).includes('Files');
}
