/**
 * A page-wide drop target: files dropped anywhere on the page go to the engine, not only on the
 * Dashboard. The same {@link createDropzone} bound to `document`; drops inside `except` (the
 * Dashboard, which handles its own) are left alone so nothing is added twice.
 */
import type { FileDescriptor } from '@ferry/core';
import { type RefObject, useEffect, useState } from 'react';
import { useFerry } from '../context.tsx';
import { createDropzone } from '../dom/dropzone.ts';

/** Whether files are being dragged over the page (for a page-wide hint). */
export function usePageDrop(enabled: boolean, except?: RefObject<HTMLElement | null>): boolean {
  const ferry = useFerry();
  const [over, setOver] = useState(false);
  useEffect(() => {
    if (!enabled || typeof document === 'undefined') return;
    const zone = createDropzone({
      onFiles: (files: FileDescriptor[]) => ferry.addFiles(files),
      // A dropped folder's first files show while the rest is read.
      progressive: true,
      onDragChange: setOver,
    });
    const inside = (e: Event) => e.target instanceof Node && !!except?.current?.contains(e.target);
    const noop = () => undefined;
    const handlers: [string, (e: DragEvent) => unknown][] = [
      ['dragenter', (e) => zone.onDragEnter(e)],
      ['dragover', (e) => zone.onDragOver(e)],
      ['dragleave', (e) => zone.onDragLeave(e)],
      // Captured, so it runs before the Dashboard's own handler stops the event: a drop there
      // only ends the page's drag state (an event without data), the Dashboard adds the files.
      ['drop', (e) => zone.onDrop(inside(e) ? { dataTransfer: null, preventDefault: noop, stopPropagation: noop } : e)],
    ];
    for (const [name, fn] of handlers) document.addEventListener(name, fn as EventListener, true);
    const offs = handlers.map(
      ([name, fn]) =>
        () =>
          document.removeEventListener(name, fn as EventListener, true),
    );
    return () => {
      for (const off of offs) off();
      setOver(false);
    };
  }, [enabled, except, ferry]);
  return over;
}
