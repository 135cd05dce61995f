/**
 * Screen capture without React, where the browser has `getDisplayMedia`: a screenshot (one frame
 * of the shared screen, window or tab, as PNG) or a recording (MediaRecorder, stopped by the
 * page or by the browser's own "stop sharing", and before it would exceed maxFileSize). The
 * browser asks the person what to share each time; nothing is captured before they choose.
 */
import type { InfoType } from '@ferry/core';
import { recorderType } from './camera.ts';
import { record } from './record.ts';

export interface ScreenCaptureState {
  status: 'idle' | 'choosing' | 'recording' | 'unsupported';
}

export interface ScreenCaptureOptions {
  i18n(key: string, vars?: Record<string, string | number>): string;
  info(message: string | { message: string; details?: string }, type: InfoType, duration: number): void;
  onChange(state: ScreenCaptureState): void;
  onCapture(file: File): void;
  /** Record the shared tab's or system's sound too, where offered (default true). */
  audio?: boolean;
  /** Asks for a display stream; `navigator.mediaDevices.getDisplayMedia` by default. */
  getDisplayMedia?(constraints: DisplayMediaStreamOptions): Promise<MediaStream>;
  /** Reads one frame of a stream as an image; a video element and a canvas by default. */
  grabFrame?(stream: MediaStream): Promise<Blob>;
}

export interface ScreenCapture {
  screenshot(): Promise<void>;
  /** Starts a recording that stops before exceeding `maxFileSize`, or stops the one running. */
  toggleRecording(maxFileSize?: number | null): Promise<void>;
  stop(): void;
}

/** Whether this browser can capture the screen. */
export function screenCaptureSupported(): boolean {
  return typeof navigator !== 'undefined' && typeof navigator.mediaDevices?.getDisplayMedia === 'function';
}

export const screenshotName = (now: number) => `screenshot-${now}.png`;
export const screenRecordingName = (now: number, ext: string) => `screen-${now}.${ext}`;

const stopTracks = (stream: MediaStream) => {
  for (const track of stream.getTracks()) track.stop();
};

/** One frame through a video element: the first frame the element can paint. */
async function videoFrame(stream: MediaStream): Promise<Blob> {
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  video.srcObject = stream;
  await video.play();
  if (!video.videoWidth) await new Promise((ok) => video.addEventListener('resize', ok, { once: true }));
  const canvas = document.createElement('canvas');
  canvas.width = video.videoWidth;
  canvas.height = video.videoHeight;
  canvas.getContext('2d')?.drawImage(video, 0, 0);
  video.srcObject = null;
  return new Promise((ok, fail) => canvas.toBlob((b) => (b ? ok(b) : fail(new Error('no frame'))), 'image/png'));
}

export function createScreenCapture(options: ScreenCaptureOptions): ScreenCapture {
  const { i18n: t, info } = options;
  const ask =
    options.getDisplayMedia ??
    (screenCaptureSupported() ? (c: DisplayMediaStreamOptions) => navigator.mediaDevices.getDisplayMedia(c) : null);
  const grab = options.grabFrame ?? videoFrame;
  let recorder: MediaRecorder | null = null;
  let stopped = false;
  const set = (status: ScreenCaptureState['status']) => !stopped && options.onChange({ status });
  set(ask ? 'idle' : 'unsupported');

  const open = async (constraints: DisplayMediaStreamOptions): Promise<MediaStream | null> => {
    if (!ask) return null;
    set('choosing');
    try {
      return await ask(constraints);
    } catch (error) {
      set('idle');
      // Choosing "Cancel" in the browser's picker is not an error worth a toast.
      if ((error as Error).name !== 'NotAllowedError' && !stopped)
        info({ message: t('screenCaptureFailed'), details: (error as Error).message }, 'error', 5000);
      return null;
    }
  };

  return {
    async screenshot() {
      const stream = await open({ video: true, audio: false });
      if (!stream) return;
      try {
        const blob = await grab(stream);
        if (!stopped)
          options.onCapture(new File([blob], screenshotName(Date.now()), { type: blob.type || 'image/png' }));
      } catch (error) {
        info({ message: t('screenCaptureFailed'), details: (error as Error).message }, 'error', 5000);
      } finally {
        stopTracks(stream);
        set('idle');
      }
    },

    async toggleRecording(maxFileSize) {
      if (recorder && recorder.state !== 'inactive') return recorder.stop();
      if (typeof MediaRecorder !== 'function') return info(t('recordingUnsupported'), 'error', 5000);
      const stream = await open({ video: true, audio: options.audio ?? true });
      if (!stream) return;
      const type = recorderType('video-only', (m) => MediaRecorder.isTypeSupported(m));
      const rec = record(stream, type, maxFileSize, (recorded) => {
        recorder = null;
        stopTracks(stream);
        set('idle');
        if (!recorded) return info(t('recordingUnsupported'), 'error', 5000);
        options.onCapture(
          new File([recorded.blob], screenRecordingName(Date.now(), recorded.ext), { type: recorded.type }),
        );
      });
      // The browser's own "Stop sharing" ends the video track: the recording ends with it.
      stream.getVideoTracks()[0]?.addEventListener('ended', () => rec.state !== 'inactive' && rec.stop());
      recorder = rec;
      set('recording');
    },

    stop() {
      if (recorder && recorder.state !== 'inactive') recorder.stop();
      stopped = true;
    },
  };
}
