// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { FerryProvider } from '../context.tsx';
import { ManualUploader } from '../test/manual-uploader.ts';
import { FileList, ROW_HEIGHT } from './FileList.tsx';

afterEach(cleanup);

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
});

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
