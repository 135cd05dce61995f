/**
 * An optional preprocessor that shrinks images before upload: fits them inside a maximum size
 * (never enlarging), re-encodes at a quality and optionally in another format, and keeps the
 * original when the result is not smaller. Progress goes through `preprocess-progress`
 * ('Compressing images...', determinate over the run's images). Off until installed:
 * `const remove = imageCompressor(ferry, { maxWidth: 1920, quality: 0.8 })`.
 */
import type { Ferry } from '../ferry.ts';
import type { FerryFile } from '../types.ts';
import { decode, encode, makeCanvas, renameFor, writableType } from './canvas.ts';
import type { Size } from './edit.ts';

export interface CompressOptions {
  /** Largest width kept, in pixels (default: no limit). */
  maxWidth?: number;
  /** Largest height kept, in pixels (default: no limit). */
  maxHeight?: number;
  /** 0..1 for lossy formats (default 0.8). */
  quality?: number;
  /** Output type (`image/webp`, `image/jpeg`...); by default each image keeps its own. */
  type?: string;
  /** Which files to compress; by default JPEG, PNG and WebP images. */
  accept?(file: FerryFile): boolean;
  /** Decodes, scales and encodes one image; the canvas by default (tests pass their own). */
  transcode?: Transcoder;
}

/** Re-encodes `blob` at the size `fit` picks from its own, as `type`. */
export type Transcoder = (blob: Blob, fit: (source: Size) => Size, type: string, quality: number) => Promise<Blob>;

/** What the compressor needs of the engine. */
export type CompressorHost = Pick<
  Ferry,
  'getFile' | 'emit' | 'i18n' | 'setFileData' | 'addPreProcessor' | 'removePreProcessor'
>;

const compressible = (file: FerryFile) => !file.isRemote && /^image\/(jpeg|png|webp)$/.test(file.type);

/** `source` fitted inside the limits, aspect kept, never enlarged. */
export function targetSize(source: Size, limits: Pick<CompressOptions, 'maxWidth' | 'maxHeight'>): Size {
  const scale = Math.min(
    1,
    (limits.maxWidth ?? Infinity) / source.width,
    (limits.maxHeight ?? Infinity) / source.height,
  );
  if (scale >= 1) return { ...source };
  return {
    width: Math.max(1, Math.round(source.width * scale)),
    height: Math.max(1, Math.round(source.height * scale)),
  };
}

/** The canvas transcoder: decode (EXIF orientation applied), draw scaled, encode. */
export const canvasTranscoder: Transcoder = async (blob, fit, type, quality) => {
  const image = await decode(blob);
  try {
    const size = fit({ width: image.width, height: image.height });
    const { canvas, ctx } = makeCanvas(size.width, size.height);
    ctx.imageSmoothingQuality = 'high';
    ctx.drawImage(image.source, 0, 0, size.width, size.height);
    return await encode(canvas, type, quality);
  } finally {
    image.close();
  }
};

/** Installs the compressor as a preprocessor of `ferry`; returns the function that removes it. */
export function imageCompressor(ferry: CompressorHost, options: CompressOptions = {}): () => void {
  const accept = options.accept ?? compressible;
  const transcode = options.transcode ?? canvasTranscoder;
  const quality = options.quality ?? 0.8;
  const fit = (source: Size) => targetSize(source, options);

  const processor = async (ids: string[]) => {
    const images = ids.map((id) => ferry.getFile(id)).filter((f): f is FerryFile => !!f?.data && accept(f));
    for (const [i, file] of images.entries()) {
      const progress = (done: number) =>
        ferry.emit('preprocess-progress', ferry.getFile(file.id) ?? file, {
          mode: 'determinate',
          message: ferry.i18n('compressingImages'),
          value: done / images.length,
        });
      progress(i);
      const data = file.data as Blob;
      const type = writableType(options.type ?? file.type);
      try {
        const out = await transcode(data, fit, type, quality);
        // A re-encode can come out larger (a small PNG as WebP...): keep whichever is smaller.
        if (out.size < data.size) ferry.setFileData(file.id, out, renameFor(file.name, type));
      } catch {
        // An image the browser cannot decode is uploaded as it is.
      }
      progress(i + 1);
    }
  };
  ferry.addPreProcessor(processor);
  return () => ferry.removePreProcessor(processor);
}
