import { afterEach, expect, test, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import type { ProcessingProgress } from '../types.ts';
import type { Uploader } from '../uploader.ts';
import { renameFor } from './canvas.ts';
import { imageCompressor, type Transcoder, targetSize } from './compress.ts';

let ferry: Ferry | undefined;
afterEach(() => ferry?.destroy());

/** An uploader that records the bytes it was given and succeeds. */
function recordingUploader(sent: Map<string, Blob | null>): Uploader {
  return {
    async upload(file) {
      sent.set(file.name, file.data);
      return { uploadURL: `/files/${file.id}` };
    },
  };
}

test('targetSize fits inside the limits, keeps the aspect, never enlarges', () => {
  expect(targetSize({ width: 4000, height: 3000 }, { maxWidth: 1000 })).toEqual({ width: 1000, height: 750 });
  expect(targetSize({ width: 4000, height: 3000 }, { maxWidth: 1000, maxHeight: 500 })).toEqual({
    width: 667,
    height: 500,
  });
  expect(targetSize({ width: 300, height: 200 }, { maxWidth: 1000, maxHeight: 1000 })).toEqual({
    width: 300,
    height: 200,
  });
  expect(targetSize({ width: 300, height: 200 }, {})).toEqual({ width: 300, height: 200 });
});

test('renameFor follows the output type', () => {
  expect(renameFor('photo.png', 'image/webp')).toBe('photo.webp');
  expect(renameFor('photo.jpeg', 'image/jpeg')).toBe('photo.jpeg');
  expect(renameFor('scan', 'image/jpeg')).toBe('scan.jpg');
  expect(renameFor('a.b.PNG', 'image/png')).toBe('a.b.PNG');
});

test('images are replaced by smaller re-encodes before upload, with progress; the rest pass untouched', async () => {
  const sent = new Map<string, Blob | null>();
  ferry = new Ferry({ uploader: recordingUploader(sent), online: { isOnline: () => true } });
  const calls: { size: { width: number; height: number }; type: string; quality: number }[] = [];
  const transcode: Transcoder = async (blob, fit, type, quality) => {
    const size = fit({ width: 4000, height: 2000 });
    calls.push({ size, type, quality });
    // A "compressed" image: a tenth of the bytes; the tiny one comes out larger.
    return new Blob([new Uint8Array(blob.size > 100 ? blob.size / 10 : blob.size * 2)], { type });
  };
  const remove = imageCompressor(ferry, { maxWidth: 1000, quality: 0.5, type: 'image/webp', transcode });
  const progress: ProcessingProgress[] = [];
  ferry.on('preprocess-progress', (_, p) => progress.push(p));
  const big = ferry.addFile({ data: new File([new Uint8Array(5000)], 'big.png', { type: 'image/png' }) }) ?? '';
  ferry.addFile({ data: new File([new Uint8Array(50)], 'tiny.jpg', { type: 'image/jpeg' }) });
  ferry.addFile({ data: new File(['plain text'], 'notes.txt', { type: 'text/plain' }) });
  ferry.setFileMeta(big, { caption: 'kept' });

  await ferry.upload();

  expect(calls).toEqual([
    { size: { width: 1000, height: 500 }, type: 'image/webp', quality: 0.5 },
    { size: { width: 1000, height: 500 }, type: 'image/webp', quality: 0.5 },
  ]);
  expect(progress.map((p) => [p.mode, p.message, p.value])).toEqual([
    ['determinate', 'Compressing images...', 0],
    ['determinate', 'Compressing images...', 0.5],
    ['determinate', 'Compressing images...', 0.5],
    ['determinate', 'Compressing images...', 1],
  ]);
  const file = ferry.getFile(big);
  expect(file?.name).toBe('big.webp');
  expect(file?.type).toBe('image/webp');
  expect(file?.size).toBe(500);
  expect(file?.meta).toMatchObject({ caption: 'kept', name: 'big.webp', type: 'image/webp' });
  expect(file?.state).toBe('complete');
  expect(file?.progress.bytesTotal).toBe(500);
  expect(sent.get('big.webp')?.size).toBe(500);
  // Larger after re-encoding: the original goes up. Not an image: never touched.
  expect(sent.get('tiny.jpg')?.size).toBe(50);
  expect(sent.get('notes.txt')?.size).toBe(10);

  // Removed, it no longer runs.
  remove();
  ferry.addFile({ data: new File([new Uint8Array(5000)], 'later.png', { type: 'image/png' }) });
  await ferry.upload();
  expect(sent.get('later.png')?.size).toBe(5000);
  expect(calls).toHaveLength(2);
});

test('an image that cannot be decoded uploads as it is', async () => {
  const sent = new Map<string, Blob | null>();
  ferry = new Ferry({ uploader: recordingUploader(sent), online: { isOnline: () => true } });
  imageCompressor(ferry, {
    transcode: vi.fn(async () => {
      throw new Error('cannot read image');
    }),
  });
  const id = ferry.addFile({ data: new File([new Uint8Array(300)], 'broken.jpg', { type: 'image/jpeg' }) }) ?? '';
  await ferry.upload();
  expect(ferry.getFile(id)?.state).toBe('complete');
  expect(sent.get('broken.jpg')?.size).toBe(300);
});

test('setFileData refuses files that are uploading or done, and keeps a name the person typed', async () => {
  const sent = new Map<string, Blob | null>();
  ferry = new Ferry({ uploader: recordingUploader(sent), online: { isOnline: () => true } });
  const id = ferry.addFile({ data: new File(['abc'], 'a.png', { type: 'image/png' }) }) ?? '';
  ferry.setFileMeta(id, { name: 'holiday.png' });
  expect(ferry.setFileData(id, new File(['abcd'], 'a-edited.png', { type: 'image/png' }))).toBe(true);
  expect(ferry.getFile(id)).toMatchObject({ name: 'a-edited.png', size: 4, meta: { name: 'holiday.png' } });
  // The duplicate check follows the new bytes: the original can be added again.
  expect(ferry.addFile({ data: new File(['abc'], 'a.png', { type: 'image/png' }) })).not.toBeNull();
  await ferry.upload();
  expect(ferry.setFileData(id, new Blob(['x']))).toBe(false);
  expect(ferry.getFile(id)?.size).toBe(4);
});
