/**
 * The camera without React: the media stream (getUserMedia), the snapshot with its countdown and
 * 'Smile!', and MediaRecorder recordings that stop before exceeding maxFileSize. A session reports
 * its state through `onChange` and hands captured files to `onCapture`; `useCamera` binds it to
 * React the way `useDropzone` binds `createDropzone`. Also the pure helpers: constraints per
 * mode, file names (the recording loop and its extensions are `record.ts`'s).
 */
import type { InfoType } from '@ferry/core';
import { record } from './record.ts';

export type CameraMode = 'video-audio' | 'video-only' | 'audio-only' | 'picture';
export const CAMERA_MODES: CameraMode[] = ['video-audio', 'video-only', 'audio-only', 'picture'];

export function constraints(mode: CameraMode, facingMode = 'user'): MediaStreamConstraints {
  return {
    video: mode === 'audio-only' ? false : { facingMode },
    audio: mode === 'video-audio' || mode === 'audio-only',
  };
}

/** The MIME type to ask MediaRecorder for, in order of preference, or '' for its default. */
export function recorderType(mode: CameraMode, isSupported: (type: string) => boolean): string {
  const video = ['video/webm;codecs=vp9,opus', 'video/webm', 'video/mp4'];
  const audio = ['audio/webm', 'audio/ogg', 'audio/mp4'];
  return (mode === 'audio-only' ? audio : video).find((t) => isSupported(t)) ?? '';
}

export const snapshotName = (now: number) => `cam-${now}.jpg`;
export const recordingName = (now: number, ext: string) => `webcam-${now}.${ext}`;

export interface CameraState {
  status: 'prompt' | 'ready' | 'unsupported' | 'denied';
  recording: boolean;
  /** The countdown or 'Smile!' shown over the view, null when none. */
  overlay: string | null;
}

export interface CameraOptions {
  mode: CameraMode;
  facingMode?: string;
  i18n(key: string, vars?: Record<string, string | number>): string;
  /** Shows a message (the engine's informer). */
  info(message: string | { message: string; details?: string }, type: InfoType, duration: number): void;
  onChange(state: CameraState): void;
  /** The live stream to show, once granted. */
  onStream(stream: MediaStream): void;
  onCapture(file: File): void;
}

export interface Camera {
  /** Snapshots the frame `video` shows as a JPEG, after counting `countdown` seconds down. */
  takePicture(video: HTMLVideoElement | null, countdown?: number | false): void;
  /** Starts a recording that stops before exceeding `maxFileSize`, or stops the one running. */
  toggleRecording(maxFileSize?: number | null): void;
  /** Stops the recording, the timers and the camera; a stream granted later is stopped at once. */
  stop(): void;
}

const SMILE_MS = 1500;
const stopTracks = (stream: MediaStream) => {
  for (const track of stream.getTracks()) track.stop();
};

/** Opens the camera for `options.mode`; the session reports through the callbacks. */
export function createCamera(options: CameraOptions): Camera {
  const { i18n: t, info } = options;
  let state: CameraState = { status: 'prompt', recording: false, overlay: null };
  let stream: MediaStream | null = null;
  let recorder: MediaRecorder | null = null;
  let stopped = false;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const set = (patch: Partial<CameraState>) => {
    state = { ...state, ...patch };
    if (!stopped) options.onChange(state);
  };
  const later = (fn: () => void, ms: number) => {
    const timer = setTimeout(() => timers.delete(timer) && fn(), ms);
    timers.add(timer);
  };
  const capture = (blob: Blob, name: string) => options.onCapture(new File([blob], name, { type: blob.type }));

  if (typeof navigator === 'undefined' || !navigator.mediaDevices?.getUserMedia) set({ status: 'unsupported' });
  else {
    set({});
    navigator.mediaDevices.getUserMedia(constraints(options.mode, options.facingMode)).then(
      (granted) => {
        // React's StrictMode mounts twice: a stream that arrives after stop() is stopped at once.
        if (stopped) return stopTracks(granted);
        stream = granted;
        options.onStream(granted);
        set({ status: 'ready' });
      },
      (error: Error) => {
        if (stopped) return;
        set({ status: 'denied' });
        info({ message: t('allowAccessTitle'), details: error.message }, 'error', 5000);
      },
    );
  }

  const snapshot = (video: HTMLVideoElement | null) => {
    try {
      if (!video?.videoWidth) throw new Error('the camera is not ready');
      const canvas = document.createElement('canvas');
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      const ctx = canvas.getContext('2d');
      if (!ctx) throw new Error('no 2d context');
      ctx.drawImage(video, 0, 0);
      canvas.toBlob(
        (blob) => (blob ? capture(blob, snapshotName(Date.now())) : info(t('cannotReadImage'), 'error', 5000)),
        'image/jpeg',
        0.92,
      );
    } catch (error) {
      info((error as Error).message, 'error', 5000);
    }
  };

  return {
    takePicture(video, countdown = false) {
      let left = countdown || 0;
      const tick = () => {
        if (left > 0) {
          set({ overlay: t('countdown', { seconds: left }) });
          left -= 1;
          return later(tick, 1000);
        }
        set({ overlay: t('smile') });
        info(t('smile'), 'success', SMILE_MS);
        later(() => {
          set({ overlay: null });
          snapshot(video);
        }, SMILE_MS);
      };
      if (left <= 0) snapshot(video);
      else tick();
    },

    toggleRecording(maxFileSize) {
      if (recorder && recorder.state !== 'inactive') return recorder.stop();
      if (!stream || typeof MediaRecorder !== 'function') return info(t('recordingUnsupported'), 'error', 5000);
      const type = recorderType(options.mode, (m) => MediaRecorder.isTypeSupported(m));
      recorder = record(stream, type, maxFileSize, (recorded) => {
        set({ recording: false });
        recorder = null;
        if (!recorded) return info(t('recordingUnsupported'), 'error', 5000);
        capture(recorded.blob, recordingName(Date.now(), recorded.ext));
      });
      set({ recording: true });
    },

    stop() {
      if (recorder && recorder.state !== 'inactive') recorder.stop();
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      if (stream) stopTracks(stream);
    },
  };
}
