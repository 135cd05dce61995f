// @vitest-environment jsdom
/**
 * The Dashboard's options, mounted whole: the locale pack (right to left for Arabic, live
 * `setLocale`), result links (`resultLinks`, and the link to copy by hand when copying is
 * refused), the status bar's per-file errors with a retry each, `pageDrop`, and the image editor
 * behind `imageEditor`.
 */
import { Ferry } from '@ferry/core';
import { ar } from '@ferry/core/locales/ar';
import { de } from '@ferry/core/locales/de';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
import { Dashboard } from './Dashboard.tsx';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

function mount(ferry: Ferry, props: Parameters<typeof Dashboard>[0] = {}) {
  return render(
    <FerryProvider ferry={ferry}>
      <Dashboard {...props} />
    </FerryProvider>,
  );
}

test('the Dashboard speaks the pack, lays out right to left for Arabic, and follows setLocale', () => {
  const ferry = new Ferry({ uploader: new ManualUploader(), locale: ar });
  mount(ferry);
  const root = screen.getByRole('region', { name: 'رفع الملفات' });
  expect(root.getAttribute('dir')).toBe('rtl');
  expect(root.getAttribute('lang')).toBe('ar');
  act(() => {
    ferry.addFiles([{ data: new File(['a'], 'a.txt') }, { data: new File(['b'], 'b.txt') }]);
  });
  expect(screen.getByRole('button', { name: 'رفع ملفين' })).toBeTruthy();
  act(() => ferry.setLocale(de));
  expect(screen.getByRole('region', { name: 'Datei-Upload' }).getAttribute('dir')).toBe('ltr');
  expect(screen.getByRole('button', { name: '2 Dateien hochladen' })).toBeTruthy();
  // Memoised rows re-render too.
  expect(screen.getAllByRole('button', { name: /^Datei entfernen / })).toHaveLength(2);
});

test('uploaded files link to their result (open, copy link) when resultLinks is on', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  const writeText = vi.fn(async () => undefined);
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
  mount(ferry, { resultLinks: true });
  act(() => {
    ferry.addFile({ data: new File(['x'], 'report.pdf') });
  });
  expect(screen.queryByRole('link', { name: 'Open file report.pdf' })).toBeNull();
  act(() => {
    void ferry.upload();
  });
  await act(() => vi.advanceTimersByTimeAsync(0));
  act(() => uploader.calls[0]?.succeed());
  await act(() => vi.advanceTimersByTimeAsync(600));
  const link = screen.getByRole('link', { name: 'Open file report.pdf' });
  expect(link.getAttribute('href')).toBe('mem://report.pdf');
  expect(link.getAttribute('target')).toBe('_blank');
  expect(link.getAttribute('rel')).toContain('noopener');
  fireEvent.click(screen.getByRole('button', { name: 'Copy link report.pdf' }));
  await act(() => vi.advanceTimersByTimeAsync(0));
  expect(writeText).toHaveBeenCalledWith('mem://report.pdf');
  expect(ferry.getState().info.map((i) => i.message)).toContain('Link copied to clipboard');
});

test('a refused copy shows the link to copy by hand', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  Object.defineProperty(navigator, 'clipboard', {
    value: { writeText: vi.fn(async () => Promise.reject(new Error('denied'))) },
    configurable: true,
  });
  document.execCommand = vi.fn(() => false);
  mount(ferry, { resultLinks: true });
  act(() => {
    ferry.addFile({ data: new File(['x'], 'a.txt') });
    void ferry.upload();
  });
  await act(() => vi.advanceTimersByTimeAsync(0));
  act(() => uploader.calls[0]?.succeed());
  await act(() => vi.advanceTimersByTimeAsync(600));
  fireEvent.click(screen.getByRole('button', { name: 'Copy link a.txt' }));
  await act(() => vi.advanceTimersByTimeAsync(0));
  expect(ferry.getState().info.at(-1)).toMatchObject({ message: 'Copy the link below', details: 'mem://a.txt' });
});

test('without resultLinks, no links', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  mount(ferry);
  act(() => {
    ferry.addFile({ data: new File(['x'], 'a.txt') });
    void ferry.upload();
  });
  await act(() => vi.advanceTimersByTimeAsync(0));
  act(() => uploader.calls[0]?.succeed());
  await act(() => vi.advanceTimersByTimeAsync(600));
  expect(screen.queryByRole('link')).toBeNull();
});

test('the status bar lists each failed file with its error and retries just that one', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  mount(ferry);
  act(() => {
    ferry.addFiles([
      { data: new File(['a'], 'a.txt') },
      { data: new File(['b'], 'b.txt') },
      { data: new File(['c'], 'c.txt') },
    ]);
    void ferry.upload();
  });
  await act(() => vi.advanceTimersByTimeAsync(0));
  act(() => {
    uploader.calls[0]?.fail('quota exceeded', 413);
    uploader.calls[1]?.succeed();
    uploader.calls[2]?.fail('server on fire', 500);
  });
  await act(() => vi.advanceTimersByTimeAsync(600));
  const toggle = screen.getByRole('button', { name: 'Show errors' });
  expect(toggle.getAttribute('aria-expanded')).toBe('false');
  expect(screen.queryAllByTestId('ferry-status-error')).toHaveLength(0);
  fireEvent.click(toggle);
  const rows = screen.getAllByTestId('ferry-status-error');
  expect(rows.map((r) => r.textContent)).toEqual([
    expect.stringMatching(/^a\.txt: quota exceeded/),
    expect.stringMatching(/^c\.txt: server on fire/),
  ]);
  expect(screen.getByRole('button', { name: 'Hide errors' }).getAttribute('aria-expanded')).toBe('true');
  const before = uploader.calls.length;
  const retry = rows[1]?.querySelector('button');
  expect(retry?.getAttribute('aria-label')).toBe('Retry upload c.txt');
  act(() => {
    if (retry) fireEvent.click(retry);
  });
  await act(() => vi.advanceTimersByTimeAsync(0));
  expect(uploader.calls.slice(before).map((p) => p.file.name)).toEqual(['c.txt']);
  expect(screen.getAllByTestId('ferry-status-error').map((r) => r.textContent)).toEqual([
    expect.stringMatching(/^a\.txt/),
  ]);
});

function dragEvent(type: string, files: File[]) {
  const event = new Event(type, { bubbles: true, cancelable: true });
  Object.assign(event, { dataTransfer: { types: ['Files'], files, items: [], dropEffect: 'none' } });
  return event;
}

test('pageDrop: files dropped anywhere on the page are added once, with a page-wide hint', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  const outside = document.createElement('div');
  document.body.append(outside);
  mount(ferry, { pageDrop: true });
  act(() => {
    outside.dispatchEvent(dragEvent('dragenter', []));
  });
  expect(document.querySelector('.ferry-page-drop')?.textContent).toBe('Drop your files here');
  await act(async () => {
    outside.dispatchEvent(dragEvent('drop', [new File(['o'], 'outside.txt')]));
  });
  expect(ferry.getFiles().map((f) => f.name)).toEqual(['outside.txt']);
  expect(document.querySelector('.ferry-page-drop')).toBeNull();
  outside.remove();
});

test('without pageDrop, a drop outside the Dashboard adds nothing', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  mount(ferry);
  await act(async () => {
    document.body.dispatchEvent(dragEvent('drop', [new File(['o'], 'outside.txt')]));
  });
  expect(ferry.getFiles()).toEqual([]);
});

test('the image editor is reachable from the file card only with imageEditor on, and only for images', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  const { unmount } = mount(ferry);
  act(() => {
    ferry.addFiles([
      { data: new File(['i'], 'photo.png', { type: 'image/png' }) },
      { data: new File(['t'], 'notes.txt', { type: 'text/plain' }) },
    ]);
  });
  fireEvent.click(screen.getByRole('button', { name: 'Edit file photo.png' }));
  expect(screen.queryByRole('button', { name: 'Edit image' })).toBeNull();
  unmount();
  mount(ferry, { imageEditor: true });
  fireEvent.click(screen.getByRole('button', { name: 'Edit file notes.txt' }));
  expect(screen.queryByRole('button', { name: 'Edit image' })).toBeNull();
  fireEvent.click(screen.getByRole('button', { name: 'Back' }));
  fireEvent.click(screen.getByRole('button', { name: 'Edit file photo.png' }));
  fireEvent.click(screen.getByRole('button', { name: 'Edit image' }));
  expect(screen.getByRole('region', { name: 'Image editor' })).toBeTruthy();
  // jsdom decodes no images: the editor says so instead of breaking.
  await act(() => vi.advanceTimersByTimeAsync(0));
  expect(ferry.getState().info.map((i) => i.message)).toContain('cannot read image');
});
