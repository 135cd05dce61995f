/**
 * The screen-capture panel: take a screenshot, or start and stop a screen recording; each
 * capture is added as a file (`source: 'screen'`). Offered only where `getDisplayMedia` exists.
 * It only renders; the capture itself is `dom/screen.ts`.
 */
import { useEffect, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { createScreenCapture, type ScreenCaptureState, type ScreenCapture as Session } from '../dom/screen.ts';
import { useI18n } from '../i18n.ts';

export interface ScreenCaptureProps {
  /** Record sound with the screen where the browser offers it (default true). */
  audio?: boolean;
  /** Recording stops before it would exceed this many bytes. */
  maxFileSize?: number | null;
  onCaptured?(id: string): void;
}

export function ScreenCapture({ audio, maxFileSize, onCaptured }: ScreenCaptureProps) {
  const ferry = useFerry();
  const t = useI18n();
  const [state, setState] = useState<ScreenCaptureState>({ status: 'idle' });
  const session = useRef<Session | null>(null);
  const captured = useRef(onCaptured);
  captured.current = onCaptured;

  useEffect(() => {
    const capture = createScreenCapture({
      audio,
      i18n: t,
      info: (message, type, duration) => ferry.info(message, type, duration),
      onChange: setState,
      onCapture: (file) => {
        const id = ferry.addFile({ data: file, name: file.name, type: file.type, source: 'screen' });
        if (id) captured.current?.(id);
      },
    });
    session.current = capture;
    return () => capture.stop();
  }, [audio, ferry, t]);

  if (state.status === 'unsupported')
    return (
      <div className="ferry-screen ferry-camera-message" role="alert">
        {t('screenCaptureNotSupported')}
      </div>
    );
  const recording = state.status === 'recording';
  return (
    <div className="ferry-screen" data-status={state.status}>
      <p className="ferry-camera-message">{recording ? t('recording') : t('screenCaptureHint')}</p>
      <div className="ferry-camera-controls">
        <button
          type="button"
          className="ferry-button"
          onClick={() => void session.current?.screenshot()}
          disabled={state.status !== 'idle'}
        >
          {t('takeScreenshot')}
        </button>
        <button
          type="button"
          className="ferry-button ferry-primary"
          onClick={() => void session.current?.toggleRecording(maxFileSize)}
          disabled={state.status === 'choosing'}
          aria-pressed={recording}
        >
          {recording ? t('stopScreenRecording') : t('startScreenRecording')}
        </button>
      </div>
    </div>
  );
}
