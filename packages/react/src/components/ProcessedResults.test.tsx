// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
import { FileList } from './FileList.tsx';

afterEach(cleanup);

test('a completed file shows its processed results: image outputs as thumbnails, others as links', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  const id = ferry.addFile({ data: new File(['x'], 'photo.jpg', { type: 'image/jpeg' }) }) as string;
  render(
    <FerryProvider ferry={ferry}>
      <FileList />
    </FerryProvider>,
  );
  await act(async () => {
    const done = ferry.upload();
    await vi.waitFor(() => uploader.last());
    ferry.setFileState(id, {
      results: {
        thumb: [{ id: 't1', name: 'photo.webp', mime: 'image/webp', ssl_url: 'https://cdn.test/t1.webp' }],
        zip: [{ id: 'z1', name: 'all.zip', mime: 'application/zip', url: 'http://cdn.test/z1.zip' }],
        bad: [{ id: 'x1', name: 'x', mime: 'text/html', ssl_url: 'javascript:alert(1)' }],
      },
    });
    // Results show once the file is complete, not while it is processing.
    expect(screen.queryByTestId('ferry-file-results')).toBeNull();
    uploader.last().succeed();
    await done;
  });
  const list = await vi.waitFor(() => screen.getByTestId('ferry-file-results'));
  const image = screen.getByRole('img', { name: 'thumb: photo.webp' }) as HTMLImageElement;
  expect(image.src).toBe('https://cdn.test/t1.webp');
  expect(image.closest('a')?.getAttribute('href')).toBe('https://cdn.test/t1.webp');
  const link = screen.getByRole('link', { name: 'all.zip' });
  expect(link.getAttribute('href')).toBe('http://cdn.test/z1.zip');
  // Only http(s) addresses become links.
  expect(list.querySelectorAll('a')).toHaveLength(2);
});
