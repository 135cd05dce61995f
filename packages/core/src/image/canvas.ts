/**
 * The canvas plumbing the image editor and the compressor share: decode a Blob into a bitmap
 * (EXIF orientation applied, as the page shows it), make a 2D canvas (OffscreenCanvas where there
 * is one, so it also runs in a worker), and encode a canvas back into a Blob.
 */

/** A decoded image with its displayed size. */
export interface Decoded {
  source: CanvasImageSource;
  width: number;
  height: number;
  close(): void;
}

export type AnyCanvas = OffscreenCanvas | HTMLCanvasElement;
export type AnyContext = OffscreenCanvasRenderingContext2D | CanvasRenderingContext2D;

/** Decodes `blob`; throws `cannot read image` style errors from the browser as they are. */
export async function decode(blob: Blob): Promise<Decoded> {
  const bitmap = await createImageBitmap(blob, { imageOrientation: 'from-image' });
  return { source: bitmap, width: bitmap.width, height: bitmap.height, close: () => bitmap.close() };
}

export function makeCanvas(width: number, height: number): { canvas: AnyCanvas; ctx: AnyContext } {
  const canvas: AnyCanvas =
    typeof OffscreenCanvas === 'function'
      ? new OffscreenCanvas(width, height)
      : Object.assign(document.createElement('canvas'), { width, height });
  const ctx = canvas.getContext('2d') as AnyContext | null;
  if (!ctx) throw new Error('no 2d canvas context');
  return { canvas, ctx };
}

/** Encodes the canvas as `type` (quality 0..1 for lossy types). */
export async function encode(canvas: AnyCanvas, type: string, quality?: number): Promise<Blob> {
  if ('convertToBlob' in canvas) return canvas.convertToBlob({ type, quality });
  return new Promise((ok, fail) =>
    canvas.toBlob((blob) => (blob ? ok(blob) : fail(new Error('canvas encoding failed'))), type, quality),
  );
}

/** The types a canvas writes in every browser; others (gif, svg...) are written as PNG. */
export function writableType(type: string): string {
  return /^image\/(jpeg|png|webp)$/.test(type) ? type : 'image/png';
}

/** `photo.png` with a new type becomes `photo.webp`; a name without extension gains one. */
export function renameFor(name: string, type: string): string {
  const ext = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' }[type];
  if (!ext) return name;
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const current = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  if (current === ext || (ext === 'jpg' && current === 'jpeg')) return name;
  return `${stem}.${ext}`;
}
