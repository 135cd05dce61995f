/**
 * React binding of {@link createCamera}: one camera session per mode and facing, its state, a ref
 * for the live view, and the two actions. Captured files go to the engine (`source: 'camera'`).
 */
import { type RefObject, useEffect, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { type Camera, type CameraMode, type CameraState, createCamera } from '../dom/camera.ts';
import { useI18n } from '../i18n.ts';

export interface UseCameraOptions {
  mode: CameraMode;
  facingMode?: string;
  /** Seconds to count down before a snapshot; false for none. */
  countdown?: number | false;
  /** Recording stops before it would exceed this many bytes. */
  maxFileSize?: number | null;
  /** Called with the id of each file captured and admitted. */
  onCaptured?(id: string): void;
}

export interface UseCamera extends CameraState {
  videoRef: RefObject<HTMLVideoElement | null>;
  takePicture(): void;
  toggleRecording(): void;
}

export function useCamera({
  mode,
  facingMode = 'user',
  countdown,
  maxFileSize,
  onCaptured,
}: UseCameraOptions): UseCamera {
  const ferry = useFerry();
  const t = useI18n();
  const [state, setState] = useState<CameraState>({ status: 'prompt', recording: false, overlay: null });
  const videoRef = useRef<HTMLVideoElement>(null);
  const session = useRef<Camera | null>(null);
  // The session outlives renders: it reports captures through the latest callback.
  const captured = useRef(onCaptured);
  captured.current = onCaptured;

  useEffect(() => {
    const camera = createCamera({
      mode,
      facingMode,
      i18n: t,
      info: (message, type, duration) => ferry.info(message, type, duration),
      onChange: setState,
      onStream: (stream) => {
        if (videoRef.current) videoRef.current.srcObject = stream;
      },
      onCapture: (file) => {
        const id = ferry.addFile({ data: file, name: file.name, type: file.type, source: 'camera' });
        if (id) captured.current?.(id);
      },
    });
    session.current = camera;
    return () => camera.stop();
  }, [mode, facingMode, ferry, t]);

  return {
    ...state,
    videoRef,
    takePicture: () => session.current?.takePicture(videoRef.current, countdown),
    toggleRecording: () => session.current?.toggleRecording(maxFileSize),
  };
}
