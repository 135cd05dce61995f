/**
 * The image editor the file card opens (off unless the Dashboard's `imageEditor` option is set):
 * the picture on a canvas with a crop box (dragged by pointer, or arrows to move and Shift+arrows
 * to resize), free or fixed ratios, quarter turns and mirrors. Apply draws the edit once
 * (`renderEdit`) and replaces the file's bytes; its id and meta stay.
 */
import {
  drawEdited,
  fitRatio,
  flip,
  type Handle,
  type ImageEdit,
  moveRect,
  noEdit,
  orientedSize,
  type Rect,
  renderEdit,
  resizeRect,
  rotate,
  type Size,
} from '@ferry/core';
import { type KeyboardEvent, type PointerEvent, useEffect, useId, useRef, useState } from 'react';
import { icons } from '../components/icons.tsx';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { thumbnailsFor } from '../thumbnails/generator.ts';

export interface ImageEditorOptions {
  /** Fixed ratios offered beside "Free", as width / height (default 1, 4/3, 16/9). */
  ratios?: { label: string; value: number }[];
  /** Output quality for lossy formats (default 0.92). */
  quality?: number;
}

export interface ImageEditorProps extends ImageEditorOptions {
  id: string;
  onDone(): void;
}

const defaultRatios = [
  { label: '1:1', value: 1 },
  { label: '4:3', value: 4 / 3 },
  { label: '16:9', value: 16 / 9 },
];
/** The preview is drawn at most this many pixels on its longer side. */
const PREVIEW_MAX = 900;

/** Whether the editor can open this type (what a canvas can decode). */
export const editableImage = (type: string) => /^image\/(jpeg|png|webp|gif|bmp|avif)$/.test(type);

export function ImageEditor({ id, onDone, ratios = defaultRatios, quality }: ImageEditorProps) {
  const ferry = useFerry();
  const t = useI18n();
  const data = useFerryState((s) => s.files[id]?.data ?? null);
  const name = useFerryState((s) => s.files[id]?.name ?? '');
  const [image, setImage] = useState<{ bitmap: ImageBitmap; size: Size } | null>(null);
  const [edit, setEdit] = useState<ImageEdit>(noEdit);
  const [ratio, setRatio] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const canvas = useRef<HTMLCanvasElement>(null);
  const frame = useRef<HTMLDivElement>(null);
  const ratioId = useId();

  useEffect(() => {
    if (!data) return;
    let bitmap: ImageBitmap | null = null;
    let live = true;
    // Through a promise, so a browser without createImageBitmap gets the toast, not a crash.
    Promise.resolve(data)
      .then((blob) => createImageBitmap(blob, { imageOrientation: 'from-image' }))
      .then(
        (b) => {
          bitmap = b;
          if (live) setImage({ bitmap: b, size: { width: b.width, height: b.height } });
          else b.close();
        },
        () => live && ferry.info(t('cannotReadImage'), 'error', 5000),
      );
    return () => {
      live = false;
      bitmap?.close();
    };
  }, [data, ferry, t]);

  const shown = image ? orientedSize(image.size, edit.rotation) : { width: 1, height: 1 };
  const crop: Rect = edit.crop ?? { x: 0, y: 0, ...shown };

  useEffect(() => {
    const el = canvas.current;
    if (!image || !el) return;
    const scale = Math.min(1, PREVIEW_MAX / Math.max(shown.width, shown.height));
    el.width = Math.round(shown.width * scale);
    el.height = Math.round(shown.height * scale);
    const ctx = el.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(scale, 0, 0, scale, 0, 0);
    drawEdited(ctx, image.bitmap, image.size, { ...edit, crop: null });
  }, [image, edit, shown.width, shown.height]);

  if (!image) return <div className="ferry-editor" aria-busy="true" />;
  const setCrop = (next: Rect) => setEdit((e) => ({ ...e, crop: next }));
  const pickRatio = (value: number | null) => {
    setRatio(value);
    setCrop(fitRatio(value, shown));
  };

  // A fixed ratio stays the same way up after a turn: the box is fitted again.
  const turn = (by: 1 | -1) =>
    setEdit((e) => {
      const next = rotate(e, by, image.size);
      return ratio ? { ...next, crop: fitRatio(ratio, orientedSize(image.size, next.rotation)) } : next;
    });

  /** Image pixels per CSS pixel of the frame. */
  const unit = () => shown.width / (frame.current?.getBoundingClientRect().width || shown.width);
  const drag = (handle: Handle | 'move') => (event: PointerEvent<HTMLElement>) => {
    event.preventDefault();
    event.stopPropagation();
    const start = { x: event.clientX, y: event.clientY, rect: crop, k: unit() };
    const target = event.currentTarget;
    target.setPointerCapture(event.pointerId);
    const onMove = (e: globalThis.PointerEvent) => {
      const dx = (e.clientX - start.x) * start.k;
      const dy = (e.clientY - start.y) * start.k;
      setCrop(
        handle === 'move' ? moveRect(start.rect, dx, dy, shown) : resizeRect(start.rect, handle, dx, dy, ratio, shown),
      );
    };
    const onUp = () => {
      target.removeEventListener('pointermove', onMove);
      target.removeEventListener('pointerup', onUp);
    };
    target.addEventListener('pointermove', onMove);
    target.addEventListener('pointerup', onUp);
  };
  const onKey = (event: KeyboardEvent) => {
    const step = Math.max(1, Math.round(Math.max(shown.width, shown.height) / 100));
    const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[event.key];
    if (!d) return;
    event.preventDefault();
    const [dx = 0, dy = 0] = d;
    setCrop(event.shiftKey ? resizeRect(crop, 'se', dx, dy, ratio, shown) : moveRect(crop, dx, dy, shown));
  };
  const apply = async () => {
    if (!data) return;
    setBusy(true);
    try {
      const blob = await renderEdit(data, { ...edit, crop }, { quality });
      ferry.setFileData(id, new File([blob], name, { type: blob.type }));
      thumbnailsFor(ferry).refresh(id);
      onDone();
    } catch (error) {
      ferry.info({ message: t('cannotReadImage'), details: (error as Error).message }, 'error', 5000);
      setBusy(false);
    }
  };
  const pct = (v: number, of: number) => `${(v / of) * 100}%`;
  const tool = (label: string, icon: React.ReactNode, onClick: () => void) => (
    <button type="button" className="ferry-icon-button" onClick={onClick} aria-label={label} title={label}>
      {icon}
    </button>
  );

  return (
    <div className="ferry-editor" aria-busy={busy}>
      <div className="ferry-editor-stage">
        <div className="ferry-editor-frame" ref={frame}>
          <canvas ref={canvas} className="ferry-editor-canvas" data-testid="ferry-editor-canvas" />
          {/* A button so it takes focus: arrows move the box, Shift+arrows resize it. */}
          <button
            type="button"
            className="ferry-editor-crop"
            aria-label={`${t('cropArea')}: ${crop.width} × ${crop.height}`}
            data-testid="ferry-editor-crop"
            style={{
              left: pct(crop.x, shown.width),
              top: pct(crop.y, shown.height),
              width: pct(crop.width, shown.width),
              height: pct(crop.height, shown.height),
            }}
            onPointerDown={drag('move')}
            onKeyDown={onKey}
          >
            {(['nw', 'ne', 'sw', 'se'] as const).map((h) => (
              <span
                key={h}
                className="ferry-editor-handle"
                data-handle={h}
                aria-hidden="true"
                onPointerDown={drag(h)}
              />
            ))}
          </button>
        </div>
      </div>
      <div className="ferry-editor-tools">
        <label htmlFor={ratioId} className="ferry-editor-ratio">
          <span>{t('aspectRatio')}</span>
          <select
            id={ratioId}
            value={ratio === null ? '' : String(ratio)}
            onChange={(e) => pickRatio(e.currentTarget.value === '' ? null : Number(e.currentTarget.value))}
          >
            <option value="">{t('aspectFree')}</option>
            {ratios.map((r) => (
              <option key={r.label} value={String(r.value)}>
                {r.value === 1 ? `${t('aspectSquare')} (${r.label})` : r.label}
              </option>
            ))}
          </select>
        </label>
        {tool(t('rotateLeft'), icons.rotateLeft, () => turn(-1))}
        {tool(t('rotateRight'), icons.rotateRight, () => turn(1))}
        {tool(t('flipHorizontal'), icons.flipHorizontal, () => setEdit((e) => flip(e, 'x', image.size)))}
        {tool(t('flipVertical'), icons.flipVertical, () => setEdit((e) => flip(e, 'y', image.size)))}
        <button
          type="button"
          className="ferry-button"
          onClick={() => {
            setRatio(null);
            setEdit(noEdit);
          }}
        >
          {t('resetEdits')}
        </button>
      </div>
      <div className="ferry-card-actions">
        <button type="button" className="ferry-button" onClick={onDone}>
          {t('cancel')}
        </button>
        <button type="button" className="ferry-button ferry-primary" onClick={() => void apply()} disabled={busy}>
          {t('applyEdits')}
        </button>
      </div>
    </div>
  );
}
