import { afterEach, expect, test, vi } from 'vitest';
import { createScreenCapture, type ScreenCaptureOptions, type ScreenCaptureState } from './screen.ts';

class FakeTrack extends EventTarget {
  stopped = false;
  stop() {
    this.stopped = true;
  }
}

function fakeStream() {
  const video = new FakeTrack();
  const audio = new FakeTrack();
  return {
    video,
    audio,
    stream: { getTracks: () => [video, audio], getVideoTracks: () => [video] } as unknown as MediaStream,
  };
}

/** A MediaRecorder that hands out what the test pushes. */
class FakeRecorder {
  static last: FakeRecorder | null = null;
  static isTypeSupported = (type: string) => type === 'video/webm';
  state: 'inactive' | 'recording' = 'inactive';
  mimeType: string;
  ondataavailable: ((e: { data: Blob }) => void) | null = null;
  onstop: (() => void) | null = null;
  constructor(_: MediaStream, options?: { mimeType?: string }) {
    this.mimeType = options?.mimeType ?? '';
    FakeRecorder.last = this;
  }
  start() {
    this.state = 'recording';
  }
  push(bytes: number) {
    this.ondataavailable?.({ data: new Blob([new Uint8Array(bytes)], { type: 'video/webm' }) });
  }
  stop() {
    this.state = 'inactive';
    this.onstop?.();
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

function setup(overrides: Partial<ScreenCaptureOptions> = {}) {
  const states: ScreenCaptureState['status'][] = [];
  const files: File[] = [];
  const info = vi.fn();
  const capture = createScreenCapture({
    i18n: (k) => k,
    info,
    onChange: (s) => states.push(s.status),
    onCapture: (f) => files.push(f),
    ...overrides,
  });
  return { capture, states, files, info };
}

test('without getDisplayMedia the capture is unsupported', () => {
  const { states } = setup();
  expect(states).toEqual(['unsupported']);
});

test('a screenshot asks for video only, grabs one frame as PNG and stops sharing', async () => {
  const s = fakeStream();
  const getDisplayMedia = vi.fn(async () => s.stream);
  const grabFrame = vi.fn(async () => new Blob(['png'], { type: 'image/png' }));
  const { capture, states, files } = setup({ getDisplayMedia, grabFrame });
  await capture.screenshot();
  expect(getDisplayMedia).toHaveBeenCalledWith({ video: true, audio: false });
  expect(files).toHaveLength(1);
  expect(files[0]?.name).toMatch(/^screenshot-\d+\.png$/);
  expect(files[0]?.type).toBe('image/png');
  expect(s.video.stopped && s.audio.stopped).toBe(true);
  expect(states).toEqual(['idle', 'choosing', 'idle']);
});

test('a recording runs until stopped, then becomes a webm file and sharing stops', async () => {
  vi.stubGlobal('MediaRecorder', FakeRecorder);
  const s = fakeStream();
  const { capture, states, files } = setup({ getDisplayMedia: async () => s.stream });
  await capture.toggleRecording();
  expect(states.at(-1)).toBe('recording');
  FakeRecorder.last?.push(100);
  FakeRecorder.last?.push(50);
  await capture.toggleRecording();
  expect(files).toHaveLength(1);
  expect(files[0]?.name).toMatch(/^screen-\d+\.webm$/);
  expect(files[0]?.size).toBe(150);
  expect(s.video.stopped).toBe(true);
  expect(states.at(-1)).toBe('idle');
});

test("the browser's stop-sharing ends the recording; the size limit stops it early", async () => {
  vi.stubGlobal('MediaRecorder', FakeRecorder);
  const s = fakeStream();
  const { capture, files } = setup({ getDisplayMedia: async () => s.stream });
  await capture.toggleRecording();
  FakeRecorder.last?.push(10);
  s.video.dispatchEvent(new Event('ended'));
  expect(files.map((f) => f.size)).toEqual([10]);

  const t = fakeStream();
  const limited = setup({ getDisplayMedia: async () => t.stream });
  await limited.capture.toggleRecording(250);
  FakeRecorder.last?.push(100);
  expect(FakeRecorder.last?.state).toBe('recording');
  FakeRecorder.last?.push(100); // 200 + another 100 would pass 250
  expect(FakeRecorder.last?.state).toBe('inactive');
  expect(limited.files.map((f) => f.size)).toEqual([200]);
});

test('cancelling the picker is quiet; other failures toast', async () => {
  const denied = Object.assign(new Error('Permission denied'), { name: 'NotAllowedError' });
  const quiet = setup({ getDisplayMedia: async () => Promise.reject(denied) });
  await quiet.capture.screenshot();
  expect(quiet.info).not.toHaveBeenCalled();
  expect(quiet.files).toEqual([]);
  expect(quiet.states.at(-1)).toBe('idle');

  const broken = setup({ getDisplayMedia: async () => Promise.reject(new Error('no display')) });
  await broken.capture.screenshot();
  expect(broken.info).toHaveBeenCalledWith({ message: 'screenCaptureFailed', details: 'no display' }, 'error', 5000);
});
