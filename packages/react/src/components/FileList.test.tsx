// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
import { FileList, ROW_HEIGHT } from './FileList.tsx';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

/** A ResizeObserver the test drives: `report()` is the browser's call after a layout. */
class FakeResizeObserver {
  static last: FakeResizeObserver | undefined;
  readonly #callback: () => void;
  constructor(callback: () => void) {
    this.#callback = callback;
    FakeResizeObserver.last = this;
  }
  observe() {}
  disconnect() {}
  report() {
    this.#callback();
  }
}

test('10,000 files render only the rows in view, with the full scroll height kept', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  ferry.addFiles(Array.from({ length: 10_000 }, (_, i) => ({ data: new File([String(i)], `f${i}.txt`) })));
  render(
    <FerryProvider ferry={ferry}>
      <FileList />
    </FerryProvider>,
  );
  const rows = screen.getAllByTestId('ferry-file');
  // jsdom has no layout: the list assumes a 400 px viewport (7 rows) plus 4 of overscan.
  expect(rows.length).toBe(11);
  const list = screen.getByRole('list');
  expect(Number.parseInt(list.style.paddingBottom, 10)).toBe((10_000 - 11) * ROW_HEIGHT);
  expect(rows[0]?.getAttribute('aria-setsize')).toBe('10000');
  // Adding 10,000 files in jsdom is the slow part; a generous bound keeps a loaded machine from
  // failing a test about what is rendered, not how fast.
}, 30_000);

test('rows show name, size and state, and remove works', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  ferry.addFiles([{ data: new File(['x'.repeat(2048)], 'two-k.bin') }]);
  render(
    <FerryProvider ferry={ferry}>
      <FileList onEdit={() => {}} />
    </FerryProvider>,
  );
  const row = screen.getByTestId('ferry-file');
  expect(row.getAttribute('data-state')).toBe('waiting');
  expect(row.textContent).toContain('two-k.bin');
  expect(row.textContent).toContain('2 KB');
  act(() => {
    fireEvent.click(screen.getByRole('button', { name: 'Remove file two-k.bin' }));
  });
  expect(ferry.getState().fileIds).toEqual([]);
  expect(screen.queryByTestId('ferry-file')).toBeNull();
});

test('the list reads its height after layout (ResizeObserver), never while mounting', () => {
  vi.stubGlobal('ResizeObserver', FakeResizeObserver);
  const height = vi.spyOn(Element.prototype, 'clientHeight', 'get').mockReturnValue(10 * ROW_HEIGHT);
  const ferry = new Ferry({ uploader: new ManualUploader() });
  ferry.addFiles(Array.from({ length: 10_000 }, (_, i) => ({ data: new File([String(i)], `f${i}.txt`) })));
  render(
    <FerryProvider ferry={ferry}>
      <FileList />
    </FerryProvider>,
  );
  // Reading it here would force a layout of the page inside the task that added the files.
  expect(height).not.toHaveBeenCalled();
  expect(screen.getAllByTestId('ferry-file').length).toBe(11);
  act(() => FakeResizeObserver.last?.report());
  expect(height).toHaveBeenCalled();
  // 640 px: 10 rows in view plus 4 of overscan.
  expect(screen.getAllByTestId('ferry-file').length).toBe(14);
}, 30_000);
