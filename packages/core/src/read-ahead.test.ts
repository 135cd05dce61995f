/**
 * Reading small files ahead, through the engine: which files are read and when, what the
 * uploader is handed, and the memory budget. Reads are counted on each Blob's `arrayBuffer`.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { Ferry, type FerryOptions } from './ferry.ts';
import type { FerryFile } from './types.ts';
import type { UploadContext, Uploader, UploadResult } from './uploader.ts';

/** An uploader that records what it was handed and finishes when told. */
class HeldUploader implements Uploader {
  calls: { file: FerryFile; bytes: Uint8Array | undefined; done: (r: UploadResult) => void }[] = [];
  upload(file: FerryFile, ctx: UploadContext): Promise<UploadResult> {
    return new Promise((done) => this.calls.push({ file, bytes: ctx.bytes?.(), done }));
  }
}

/** A Blob of `size` bytes of `fill`, whose reads are counted. */
function counted(size: number, fill: number) {
  const blob = new Blob([new Uint8Array(size).fill(fill)]);
  const read = vi.spyOn(blob, 'arrayBuffer');
  return { blob, reads: () => read.mock.calls.length };
}

/** Lets reads and the engine's follow-ups run. */
const settle = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((ok) => setTimeout(ok, 0));
};

let ferry: Ferry;
let uploader: HeldUploader;

function make(options: Partial<FerryOptions> = {}): Ferry {
  uploader = new HeldUploader();
  ferry = new Ferry({ uploader, online: { isOnline: () => true, target: new EventTarget() }, ...options });
  return ferry;
}

afterEach(() => ferry?.destroy());

test('small files are read once after adding and the uploader gets their bytes; a large one is not read', async () => {
  make({ readAhead: { maxFileSize: 1024 } });
  const small = counted(1024, 7);
  const large = counted(1025, 9);
  ferry.addFiles([
    { name: 'small.bin', data: small.blob },
    { name: 'large.bin', data: large.blob },
  ]);
  await settle();
  expect([small.reads(), large.reads()]).toEqual([1, 0]);
  void ferry.upload();
  await settle();
  const [first, second] = uploader.calls;
  expect(first?.file.name).toBe('small.bin');
  expect(first?.bytes).toEqual(new Uint8Array(1024).fill(7));
  expect(second?.bytes).toBeUndefined();
  expect(small.reads()).toBe(1);
});

test('readAhead: false reads nothing and hands the uploader no bytes', async () => {
  make({ readAhead: false });
  const small = counted(10, 1);
  ferry.addFiles([{ name: 'a.bin', data: small.blob }]);
  await settle();
  void ferry.upload();
  await settle();
  expect(small.reads()).toBe(0);
  expect(uploader.calls[0]?.bytes).toBeUndefined();
});

test('at most the budget is held; a removed file makes room for the next', async () => {
  make({ readAhead: { maxFileSize: 1024, budget: 3 * 1024 } });
  const files = [1, 2, 3, 4, 5].map((n) => counted(1024, n));
  ferry.addFiles(files.map((f, i) => ({ name: `f${i}.bin`, data: f.blob })));
  await settle();
  expect(files.map((f) => f.reads())).toEqual([1, 1, 1, 0, 0]);
  ferry.removeFile(ferry.getFiles()[1]?.id ?? '');
  await settle();
  expect(files.map((f) => f.reads())).toEqual([1, 1, 1, 1, 0]);
});

test('nothing is read while uploads run; reading goes on once they are over', async () => {
  make({ readAhead: { maxFileSize: 1024, budget: 1024 }, limit: 1 });
  const [a, b, c] = [1, 2, 3].map((n) => counted(1024, n));
  ferry.addFiles([
    { name: 'a.bin', data: a?.blob },
    { name: 'b.bin', data: b?.blob },
  ]);
  await settle();
  const uploading = ferry.upload();
  await settle();
  expect(uploader.calls[0]?.bytes).toEqual(new Uint8Array(1024).fill(1));
  // a's room is free, but b is in the run: reading it now would only compete with the requests.
  uploader.calls[0]?.done({});
  await settle();
  expect([a?.reads(), b?.reads()]).toEqual([1, 0]);
  uploader.calls[1]?.done({});
  await uploading;
  ferry.addFiles([{ name: 'c.bin', data: c?.blob }]);
  await settle();
  expect(c?.reads()).toBe(1);
});

test('nothing is read while sizes are being read; reading starts once they are all known', async () => {
  make({ sizing: { eagerUpTo: 1 } });
  const files = [1, 2, 3].map((n) => counted(100, n));
  ferry.addFiles(files.map((f, i) => ({ name: `f${i}.bin`, data: f.blob })));
  expect(ferry.getState().sizesPending).toBe(3);
  expect(files.map((f) => f.reads())).toEqual([0, 0, 0]);
  await vi.waitFor(() => expect(ferry.getState().sizesPending).toBe(0));
  await settle();
  expect(files.map((f) => f.reads())).toEqual([1, 1, 1]);
});

test('an edited file is read again, and the bytes of its old data are never handed out', async () => {
  make();
  const original = counted(100, 1);
  const [id = ''] = ferry.addFiles([{ name: 'photo.bin', data: original.blob }]);
  await settle();
  const edited = counted(50, 2);
  expect(ferry.setFileData(id, edited.blob)).toBe(true);
  await settle();
  expect([original.reads(), edited.reads()]).toEqual([1, 1]);
  void ferry.upload();
  await settle();
  expect(uploader.calls[0]?.bytes).toEqual(new Uint8Array(50).fill(2));
});

test('a file that cannot be read is sent as its Blob', async () => {
  make();
  const broken = counted(10, 3);
  broken.blob.arrayBuffer = () => Promise.reject(new DOMException('changed on disk', 'NotReadableError'));
  ferry.addFiles([{ name: 'gone.bin', data: broken.blob }]);
  await settle();
  void ferry.upload();
  await settle();
  expect(uploader.calls[0]?.bytes).toBeUndefined();
});
