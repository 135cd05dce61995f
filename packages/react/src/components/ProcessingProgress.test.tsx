// @vitest-environment jsdom
/**
 * The "Processing" bars follow the service: with the `assembly` option against a scripted
 * service (fake fetch, fake timers) whose polled status reports `progress_combined`, the file's
 * bar and the status bar show that figure, and move with it; a status without a figure leaves
 * both indeterminate (no value), not stuck at the upload's 100 %.
 */
import { Ferry } from '@ferry/core';
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
import { FileList } from './FileList.tsx';
import { StatusBar } from './StatusBar.tsx';

const SERVICE = 'http://127.0.0.1:4000';
const ASSEMBLY = `${SERVICE}/assemblies/abc`;
const TUS = `${SERVICE}/files/`;

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

/** A service that answers the create, then each poll from `polls` (the last one repeating). */
function start(polls: Record<string, unknown>[]) {
  const created = {
    ok: 'ASSEMBLY_UPLOADING',
    assembly_id: 'abc',
    assembly_ssl_url: ASSEMBLY,
    tus_url: TUS,
    uploads: [],
    results: {},
  };
  const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
    if ((init?.method ?? 'GET') === 'POST') return Response.json(created);
    return Response.json(polls.length > 1 ? polls.shift() : polls[0]);
  });
  const tus = new ManualUploader();
  const ferry = new Ferry({
    online: { isOnline: () => true, target: new EventTarget() },
    assembly: {
      params: async () => ({ params: '{"auth":{"key":"k"}}' }),
      service: SERVICE,
      fetch,
      pollDelays: [1000],
      uploaderFor: () => tus,
    },
  });
  ferry.addFile({ data: new File(['abc'], 'clip.mp4', { type: 'video/mp4' }) });
  render(
    <FerryProvider ferry={ferry}>
      <FileList />
      <StatusBar />
    </FerryProvider>,
  );
  return { ferry, tus };
}

const executing = (progress?: number) => ({
  ok: 'ASSEMBLY_EXECUTING',
  uploads: [{ id: 'u1', name: 'clip.mp4', size: 3, tus_upload_url: `${TUS}u1` }],
  results: {},
  ...(progress === undefined ? {} : { progress_combined: progress }),
});

function bars() {
  const file = screen.getByRole('progressbar', { name: /clip\.mp4/ }) as HTMLProgressElement;
  const total = screen.getAllByRole('progressbar').find((e) => e !== file) as HTMLElement;
  return {
    file: file.getAttribute('value'),
    total: total.getAttribute('aria-valuenow'),
    label: screen.getByTestId('ferry-status').textContent,
    row: screen.getByTestId('ferry-file').textContent ?? '',
  };
}

test('the bars show the processing progress the service reports, and follow it', async () => {
  const { ferry, tus } = start([executing(40), executing(75)]);
  await act(async () => {
    void ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    tus.last().resolve({ uploadURL: `${TUS}u1` });
    // A frame for the state to reach the components (they hear changes once per frame).
    await vi.advanceTimersByTimeAsync(50);
  });
  expect(ferry.getFiles()[0]?.state).toBe('postprocessing');
  expect(bars()).toMatchObject({ file: '40', total: '40', label: 'Processing: 40%' });
  expect(bars().row).toContain('Processing: 40%');
  await act(() => vi.advanceTimersByTimeAsync(1000));
  expect(bars()).toMatchObject({ file: '75', total: '75', label: 'Processing: 75%' });
});

test('without a figure from the service both bars are indeterminate', async () => {
  const { ferry, tus } = start([executing()]);
  await act(async () => {
    void ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    tus.last().resolve({ uploadURL: `${TUS}u1` });
    // A frame for the state to reach the components (they hear changes once per frame).
    await vi.advanceTimersByTimeAsync(50);
  });
  expect(ferry.getFiles()[0]?.state).toBe('postprocessing');
  expect(bars()).toMatchObject({ file: null, total: null, label: 'Processing' });
});
