// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { StrictMode, useState } from 'react';
import { afterEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
import { Dashboard } from './Dashboard.tsx';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

test('StrictMode mount, unmount and remount keep one working Dashboard', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  const ui = (
    <StrictMode>
      <FerryProvider ferry={ferry}>
        <Dashboard link={{ companionUrl: 'http://companion.test' }} camera />
      </FerryProvider>
    </StrictMode>
  );
  const first = render(ui);
  first.unmount();
  render(ui);
  act(() => {
    ferry.addFile({ data: new File(['x'], 'x.txt') });
  });
  expect(screen.getAllByTestId('ferry-file')).toHaveLength(1);
  expect(screen.getByRole('button', { name: 'Upload 1 file' })).toBeTruthy();
  expect(errors).not.toHaveBeenCalled();
  errors.mockRestore();
});

test('pasted files are added; a pasted non-URL text is ignored', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard />
    </FerryProvider>,
  );
  const root = screen.getByRole('region', { name: 'File upload' });
  const file = new File(['p'], 'pasted.txt');
  act(() => {
    fireEvent.paste(root, { clipboardData: { files: [file], getData: () => '' } });
  });
  expect(ferry.getFiles().map((f) => f.name)).toEqual(['pasted.txt']);
  act(() => {
    fireEvent.paste(root, { clipboardData: { files: [], getData: () => 'just words' } });
  });
  expect(ferry.getFiles()).toHaveLength(1);
});

test('a bad link shows the incorrect-URL toast for 4 s and adds nothing', async () => {
  vi.useFakeTimers();
  const ferry = new Ferry({ uploader: new ManualUploader() });
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard link={{ companionUrl: 'http://companion.test' }} />
    </FerryProvider>,
  );
  fireEvent.click(screen.getByRole('button', { name: 'Link' }));
  const input = screen.getByRole('textbox', { name: 'File URL' });
  fireEvent.change(input, { target: { value: 'ftp://example.com/file.bin' } });
  // The import is asynchronous (core's importLink): its answer comes after the click's microtasks.
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: 'Import' }));
  });
  const toast = screen.getByRole('alert');
  expect(toast.textContent).toContain('Incorrect URL: Please make sure you are entering a direct link to a file');
  expect(ferry.getState().info[0]?.duration).toBe(4000);
  act(() => {
    vi.advanceTimersByTime(4000);
  });
  expect(screen.queryByRole('alert')).toBeNull();
  expect(ferry.getFiles()).toHaveLength(0);
});

test('modal: Escape and the close button close it, focus returns to the trigger', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  function Page() {
    const [open, setOpen] = useState(false);
    return (
      <FerryProvider ferry={ferry}>
        <button type="button" onClick={() => setOpen(true)}>
          Open
        </button>
        <Dashboard modal open={open} onRequestClose={() => setOpen(false)} />
      </FerryProvider>
    );
  }
  render(<Page />);
  const trigger = screen.getByRole('button', { name: 'Open' });
  trigger.focus();
  fireEvent.click(trigger);
  const dialog = screen.getByRole('dialog');
  expect(dialog.getAttribute('aria-modal')).toBe('true');
  fireEvent.keyDown(dialog, { key: 'Escape' });
  expect(screen.queryByRole('dialog')).toBeNull();
  expect(document.activeElement).toBe(trigger);

  fireEvent.click(trigger);
  fireEvent.click(screen.getByRole('button', { name: 'Close Modal' }));
  expect(screen.queryByRole('dialog')).toBeNull();
});

test('every string comes through the engine’s locale, including the Dashboard’s own keys', () => {
  const ferry = new Ferry({
    uploader: new ManualUploader(),
    // `camera` and `link` are Dashboard keys; `uploadXFiles` is one of the engine's.
    locale: {
      camera: 'Kamera',
      link: 'Verknüpfung',
      uploadXFiles: { one: '%{smart_count} Datei hochladen', other: '%{smart_count} Dateien hochladen' },
    } as never,
  });
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard link={{ companionUrl: 'http://companion.test' }} camera />
    </FerryProvider>,
  );
  act(() => {
    ferry.addFiles([{ data: new File(['a'], 'a.txt') }, { data: new File(['b'], 'b.txt') }]);
  });
  expect(screen.getByRole('button', { name: 'Kamera' })).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Verknüpfung' })).toBeTruthy();
  expect(screen.getByRole('button', { name: '2 Dateien hochladen' })).toBeTruthy();
});

test('a large batch shows its count and rows at once; sizes pending until read, upload waits for them', async () => {
  // Sizes are released one time slice at a time by the test.
  const yields: (() => void)[] = [];
  const ferry = new Ferry({
    uploader: new ManualUploader(),
    sizing: { commitMs: 0, yieldToMain: () => new Promise<void>((ok) => yields.push(ok)) },
  });
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard />
    </FerryProvider>,
  );
  act(() => {
    ferry.addFiles(Array.from({ length: 500 }, (_, i) => ({ data: new File(['abc'], `f${i}.txt`) })));
  });
  expect(screen.getByText('500 files selected', { selector: '.ferry-toolbar-title' })).toBeTruthy();
  const firstRow = screen.getAllByTestId('ferry-file')[0];
  expect(firstRow?.querySelector('.ferry-file-size[data-pending]')?.textContent).toBe('…');
  const upload = screen.getByRole('button', { name: 'Upload 500 files' }) as HTMLButtonElement;
  expect(upload.disabled).toBe(true);
  while (yields.length > 0) {
    await act(async () => {
      yields.shift()?.();
    });
  }
  expect(ferry.getState().sizesPending).toBe(0);
  // Components hear of changes at most once a frame (changes.ts): the last one may be told a
  // frame later, so the rows and the button are read once that frame has passed.
  await waitFor(() => {
    expect(firstRow?.querySelector('.ferry-file-size')?.textContent).toBe('3 B');
    expect((screen.getByRole('button', { name: 'Upload 500 files' }) as HTMLButtonElement).disabled).toBe(false);
  });
});

test('a folder dropped on the Dashboard shows its first files while the rest is still read', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard />
    </FerryProvider>,
  );
  // A folder whose reader answers one batch per release, as Chromium answers readEntries.
  const waiting: (() => void)[] = [];
  const batches = [['a.txt', 'b.txt'], ['c.txt']].map((names) =>
    names.map((name) => ({
      isFile: true,
      isDirectory: false,
      name,
      fullPath: `/photos/${name}`,
      file: (ok: (f: File) => void) => ok(new File(['x'], name)),
    })),
  );
  const folder = {
    isFile: false,
    isDirectory: true,
    name: 'photos',
    fullPath: '/photos',
    createReader: () => ({
      readEntries: (ok: (e: unknown[]) => void) => waiting.push(() => ok(batches.shift() ?? [])),
    }),
  };
  const dataTransfer = { types: ['Files'], items: [{ kind: 'file', webkitGetAsEntry: () => folder }], files: [] };
  const release = () =>
    act(async () => {
      waiting.shift()?.();
      for (let i = 0; i < 5; i += 1) await Promise.resolve();
    });
  fireEvent.drop(screen.getByRole('region'), { dataTransfer });
  await release();
  expect(screen.getAllByTestId('ferry-file').map((r) => r.textContent?.slice(0, 5))).toEqual(['a.txt', 'b.txt']);
  await release();
  await release();
  await act(() => new Promise((r) => setTimeout(r, 150)));
  expect(ferry.getFiles().map((f) => f.relativePath)).toEqual(['photos/a.txt', 'photos/b.txt', 'photos/c.txt']);
});
