/**
 * Makes one thumbnail from an image Blob. Both functions are self-contained (they use only
 * globals) because their source text is also run inside a Worker; see `worker.ts`.
 */

/**
 * The size an image is scaled to before drawing, so no canvas exceeds what browsers allow:
 * at most `maxSide` px per dimension and about `maxPixels` pixels, keeping the aspect ratio.
 */
export function cappedSize(width: number, height: number, maxSide = 4096, maxPixels = 5_000_000) {
  let scale = Math.min(1, maxSide / width, maxSide / height);
  if (width * scale * height * scale > maxPixels) scale = Math.sqrt(maxPixels / (width * height));
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}

/** A thumbnail `targetWidth` px wide (never upscaled), EXIF orientation applied, as a Blob. */
export async function makeThumbnail(blob: Blob, targetWidth: number): Promise<Blob> {
  // 'from-image' applies the EXIF orientation while decoding.
  let bitmap = await createImageBitmap(blob, { imageOrientation: 'from-image' });
  const capped = cappedSize(bitmap.width, bitmap.height);
  if (capped.width < bitmap.width) {
    const smaller = await createImageBitmap(bitmap, {
      resizeWidth: capped.width,
      resizeHeight: capped.height,
      resizeQuality: 'high',
    });
    bitmap.close();
    bitmap = smaller;
  }
  const width = Math.min(targetWidth, bitmap.width);
  const height = Math.max(1, Math.round((bitmap.height * width) / bitmap.width));
  const type = blob.type === 'image/png' || blob.type === 'image/gif' ? 'image/png' : 'image/jpeg';
  if (typeof OffscreenCanvas === 'function') {
    const canvas = new OffscreenCanvas(width, height);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d context');
    ctx.drawImage(bitmap, 0, 0, width, height);
    bitmap.close();
    return canvas.convertToBlob({ type, quality: 0.8 });
  }
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, width, height);
  bitmap.close();
  return new Promise((ok, fail) => canvas.toBlob((b) => (b ? ok(b) : fail(new Error('toBlob failed'))), type, 0.8));
}
