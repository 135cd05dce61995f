/**
 * Image editing before upload: crop (free or at a fixed ratio), rotate by quarter turns and flip,
 * described as data ({@link ImageEdit}) and drawn once on a canvas into a new Blob. The geometry
 * is pure so any UI (the Dashboard's editor, a page's own) can drive it. Crop rectangles are in
 * the pixels of the image as shown (rotated and flipped), never of the source.
 */
import { decode, encode, makeCanvas, writableType } from './canvas.ts';

export type Rotation = 0 | 90 | 180 | 270;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

export interface ImageEdit {
  rotation: Rotation;
  /** Mirrored left to right, as shown (after rotation). */
  flipX: boolean;
  /** Mirrored top to bottom, as shown. */
  flipY: boolean;
  /** The part kept, in shown pixels; null keeps everything. */
  crop: Rect | null;
}

export const noEdit: ImageEdit = { rotation: 0, flipX: false, flipY: false, crop: null };

/** A corner of the crop rectangle being dragged. */
export type Handle = 'nw' | 'ne' | 'sw' | 'se';

/** The smallest crop side, in shown pixels. */
export const MIN_CROP = 8;

/** The size of a `source` image once turned by `rotation`. */
export function orientedSize(source: Size, rotation: Rotation): Size {
  return rotation % 180 === 0 ? { ...source } : { width: source.height, height: source.width };
}

/** Turns the image a quarter clockwise (1) or anticlockwise (-1); the crop turns with it. */
export function rotate(edit: ImageEdit, turn: 1 | -1, source: Size): ImageEdit {
  const { width: w, height: h } = orientedSize(source, edit.rotation);
  const rotation = ((edit.rotation + (turn === 1 ? 90 : 270)) % 360) as Rotation;
  const c = edit.crop;
  // Flips are in shown space, so after a quarter turn a left-right mirror reads as top-bottom.
  const next = { ...edit, rotation, flipX: edit.flipY, flipY: edit.flipX };
  if (!c) return next;
  const crop =
    turn === 1
      ? { x: h - c.y - c.height, y: c.x, width: c.height, height: c.width }
      : { x: c.y, y: w - c.x - c.width, width: c.height, height: c.width };
  return { ...next, crop };
}

/** Mirrors the image as shown; the crop mirrors with it. */
export function flip(edit: ImageEdit, axis: 'x' | 'y', source: Size): ImageEdit {
  const { width: w, height: h } = orientedSize(source, edit.rotation);
  const c = edit.crop;
  if (axis === 'x') return { ...edit, flipX: !edit.flipX, crop: c && { ...c, x: w - c.x - c.width } };
  return { ...edit, flipY: !edit.flipY, crop: c && { ...c, y: h - c.y - c.height } };
}

/** The largest centred rectangle of `ratio` (width / height; null for the whole image) in `bounds`. */
export function fitRatio(ratio: number | null, bounds: Size): Rect {
  const { width: W, height: H } = bounds;
  if (!ratio) return { x: 0, y: 0, width: W, height: H };
  let width = W;
  let height = Math.round(W / ratio);
  if (height > H) {
    height = H;
    width = Math.round(H * ratio);
  }
  return { x: Math.round((W - width) / 2), y: Math.round((H - height) / 2), width, height };
}

/** Moves `rect` by (dx, dy), kept inside `bounds`. */
export function moveRect(rect: Rect, dx: number, dy: number, bounds: Size): Rect {
  return {
    ...rect,
    x: Math.round(Math.min(Math.max(0, rect.x + dx), bounds.width - rect.width)),
    y: Math.round(Math.min(Math.max(0, rect.y + dy), bounds.height - rect.height)),
  };
}

/**
 * Drags corner `handle` by (dx, dy): the opposite corner stays, the size keeps `ratio` when one
 * is set (the width leads), and the rectangle stays inside `bounds` and at least MIN_CROP wide.
 */
export function resizeRect(
  rect: Rect,
  handle: Handle,
  dx: number,
  dy: number,
  ratio: number | null,
  bounds: Size,
): Rect {
  const west = handle === 'nw' || handle === 'sw';
  const north = handle === 'nw' || handle === 'ne';
  const anchorX = west ? rect.x + rect.width : rect.x;
  const anchorY = north ? rect.y + rect.height : rect.y;
  const maxW = west ? anchorX : bounds.width - anchorX;
  const maxH = north ? anchorY : bounds.height - anchorY;
  let width = Math.min(maxW, Math.max(MIN_CROP, rect.width + (west ? -dx : dx)));
  let height = Math.min(maxH, Math.max(MIN_CROP, rect.height + (north ? -dy : dy)));
  if (ratio) {
    width = Math.min(width, maxH * ratio);
    height = width / ratio;
  }
  width = Math.round(width);
  height = Math.round(height);
  return { x: west ? anchorX - width : anchorX, y: north ? anchorY - height : anchorY, width, height };
}

/** Whether `edit` changes anything for an image of `source` size. */
export function isEdited(edit: ImageEdit, source: Size): boolean {
  if (edit.rotation !== 0 || edit.flipX || edit.flipY) return true;
  const c = edit.crop;
  return c !== null && (c.x !== 0 || c.y !== 0 || c.width !== source.width || c.height !== source.height);
}

/**
 * Draws `edit` of an image on `ctx` whose origin is the shown image's top-left corner: turned
 * about the centre, then mirrored in shown space.
 */
export function drawEdited(
  ctx: Pick<CanvasRenderingContext2D, 'translate' | 'rotate' | 'scale' | 'drawImage'>,
  image: CanvasImageSource,
  source: Size,
  edit: ImageEdit,
): void {
  const shown = orientedSize(source, edit.rotation);
  ctx.translate(shown.width / 2, shown.height / 2);
  ctx.scale(edit.flipX ? -1 : 1, edit.flipY ? -1 : 1);
  ctx.rotate((edit.rotation * Math.PI) / 180);
  ctx.drawImage(image, -source.width / 2, -source.height / 2);
}

export interface RenderOptions {
  /** Output type; by default the input's when a canvas can write it, else PNG. */
  type?: string;
  /** 0..1 for lossy types (default 0.92). */
  quality?: number;
}

/** Applies `edit` to the image in `blob`: a new Blob of the cropped size. */
export async function renderEdit(blob: Blob, edit: ImageEdit, options: RenderOptions = {}): Promise<Blob> {
  const image = await decode(blob);
  try {
    const source = { width: image.width, height: image.height };
    const crop = edit.crop ?? { x: 0, y: 0, ...orientedSize(source, edit.rotation) };
    const { canvas, ctx } = makeCanvas(crop.width, crop.height);
    ctx.translate(-crop.x, -crop.y);
    drawEdited(ctx, image.source, source, edit);
    return await encode(canvas, options.type ?? writableType(blob.type), options.quality ?? 0.92);
  } finally {
    image.close();
  }
}
