import { describe, expect, test } from 'vitest';
import {
  drawEdited,
  fitRatio,
  flip,
  type ImageEdit,
  isEdited,
  MIN_CROP,
  moveRect,
  noEdit,
  orientedSize,
  resizeRect,
  rotate,
} from './edit.ts';

const source = { width: 400, height: 200 };

/** Records the 2D transform the calls build, to map source points onto the shown image. */
function recorder() {
  let m = [1, 0, 0, 1, 0, 0]; // a b c d e f, as in DOMMatrix
  const mul = (n: number[]) => {
    const [a, b, c, d, e, f] = m as [number, number, number, number, number, number];
    const [A, B, C, D, E, F] = n as [number, number, number, number, number, number];
    m = [a * A + c * B, b * A + d * B, a * C + c * D, b * C + d * D, a * E + c * F + e, b * E + d * F + f];
  };
  let origin = [0, 0];
  return {
    translate: (x: number, y: number) => mul([1, 0, 0, 1, x, y]),
    scale: (x: number, y: number) => mul([x, 0, 0, y, 0, 0]),
    rotate: (r: number) => mul([Math.cos(r), Math.sin(r), -Math.sin(r), Math.cos(r), 0, 0]),
    drawImage: (_: unknown, x: number, y: number) => {
      origin = [x, y];
    },
    /** Where source pixel (x, y) lands. */
    map(x: number, y: number): [number, number] {
      const [a, b, c, d, e, f] = m as [number, number, number, number, number, number];
      const px = x + (origin[0] ?? 0);
      const py = y + (origin[1] ?? 0);
      return [Math.round(a * px + c * py + e), Math.round(b * px + d * py + f)];
    },
  };
}

function shownCorner(edit: ImageEdit): [number, number] {
  const ctx = recorder();
  drawEdited(ctx as never, {} as CanvasImageSource, source, edit);
  return ctx.map(0, 0);
}

describe('drawing an edit', () => {
  test('the source top-left corner lands where a turn and a mirror put it', () => {
    expect(shownCorner(noEdit)).toEqual([0, 0]);
    // A quarter turn clockwise of a 400x200 image shows it 200x400, top-left now top-right.
    expect(shownCorner(rotate(noEdit, 1, source))).toEqual([200, 0]);
    expect(shownCorner(rotate(noEdit, -1, source))).toEqual([0, 400]);
    expect(shownCorner({ ...noEdit, rotation: 180 })).toEqual([400, 200]);
    expect(shownCorner(flip(noEdit, 'x', source))).toEqual([400, 0]);
    expect(shownCorner(flip(noEdit, 'y', source))).toEqual([0, 200]);
    // Mirrors are in shown space: turned then mirrored left-right, the corner goes top-left.
    expect(shownCorner(flip(rotate(noEdit, 1, source), 'x', source))).toEqual([0, 0]);
    // Mirrored first then turned: the mirror turns with the image.
    expect(shownCorner(rotate(flip(noEdit, 'x', source), 1, source))).toEqual([200, 400]);
  });
});

describe('rotation and flips carry the crop', () => {
  const crop = { x: 10, y: 20, width: 100, height: 50 };
  const cropped: ImageEdit = { ...noEdit, crop };

  test('a quarter turn swaps the sides and moves the crop with the pixels', () => {
    expect(orientedSize(source, 90)).toEqual({ width: 200, height: 400 });
    expect(rotate(cropped, 1, source).crop).toEqual({ x: 130, y: 10, width: 50, height: 100 });
    expect(rotate(cropped, -1, source).crop).toEqual({ x: 20, y: 290, width: 50, height: 100 });
  });

  test('four turns, or a turn and back, give the edit back', () => {
    let e = cropped;
    for (let i = 0; i < 4; i++) e = rotate(e, 1, source);
    expect(e).toEqual(cropped);
    expect(rotate(rotate(cropped, 1, source), -1, source)).toEqual(cropped);
    const mirrored = flip(cropped, 'x', source);
    expect(mirrored.crop).toEqual({ x: 290, y: 20, width: 100, height: 50 });
    expect(flip(mirrored, 'x', source)).toEqual(cropped);
    expect(flip(cropped, 'y', source).crop).toEqual({ x: 10, y: 130, width: 100, height: 50 });
  });

  test('isEdited', () => {
    expect(isEdited(noEdit, source)).toBe(false);
    expect(isEdited({ ...noEdit, crop: { x: 0, y: 0, ...source } }, source)).toBe(false);
    expect(isEdited(cropped, source)).toBe(true);
    expect(isEdited({ ...noEdit, flipY: true }, source)).toBe(true);
  });
});

describe('crop rectangle', () => {
  const bounds = { width: 400, height: 200 };

  test('fitRatio: the largest centred rectangle of the ratio', () => {
    expect(fitRatio(null, bounds)).toEqual({ x: 0, y: 0, width: 400, height: 200 });
    expect(fitRatio(1, bounds)).toEqual({ x: 100, y: 0, width: 200, height: 200 });
    expect(fitRatio(16 / 9, bounds)).toEqual({ x: 22, y: 0, width: 356, height: 200 });
    expect(fitRatio(1 / 2, { width: 400, height: 1000 })).toEqual({ x: 0, y: 100, width: 400, height: 800 });
  });

  test('moveRect stays inside', () => {
    const r = { x: 10, y: 10, width: 100, height: 100 };
    expect(moveRect(r, 30, 5, bounds)).toEqual({ x: 40, y: 15, width: 100, height: 100 });
    expect(moveRect(r, -50, 500, bounds)).toEqual({ x: 0, y: 100, width: 100, height: 100 });
  });

  test('resizeRect keeps the opposite corner, the ratio, the bounds and the minimum', () => {
    const r = { x: 100, y: 50, width: 100, height: 100 };
    expect(resizeRect(r, 'se', 20, 10, null, bounds)).toEqual({ x: 100, y: 50, width: 120, height: 110 });
    expect(resizeRect(r, 'nw', -20, -10, null, bounds)).toEqual({ x: 80, y: 40, width: 120, height: 110 });
    // Square: the width leads, the height follows, and the bottom edge (200) caps both.
    expect(resizeRect(r, 'se', 80, 0, 1, bounds)).toEqual({ x: 100, y: 50, width: 150, height: 150 });
    expect(resizeRect(r, 'ne', 30, 0, 2, bounds)).toEqual({ x: 100, y: 85, width: 130, height: 65 });
    expect(resizeRect(r, 'se', 1000, 1000, null, bounds)).toEqual({ x: 100, y: 50, width: 300, height: 150 });
    expect(resizeRect(r, 'sw', 500, -500, null, bounds)).toEqual({
      x: 200 - MIN_CROP,
      y: 50,
      width: MIN_CROP,
      height: MIN_CROP,
    });
  });
});
