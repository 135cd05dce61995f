/**
 * A drop target for files and folders with a drop hint. Wraps any content; the Dashboard wraps
 * itself in one. Uses {@link useDropzone}, so the behaviour is also available without this markup.
 */
import type { FileDescriptor } from '@ferry/core';
import type { HTMLAttributes, ReactNode, Ref } from 'react';
import { type UseDropzoneOptions, useDropzone } from '../hooks/useDropzone.ts';
import { useI18n } from '../i18n.ts';

export interface DropZoneProps extends HTMLAttributes<HTMLDivElement> {
  onFiles?(files: FileDescriptor[]): void;
  /** Hand a dropped folder's files over part by part (see {@link UseDropzoneOptions.progressive}). */
  progressive?: boolean;
  disabled?: boolean;
  children?: ReactNode;
  ref?: Ref<HTMLDivElement>;
}

export function DropZone({ onFiles, progressive, disabled, children, className = '', ref, ...rest }: DropZoneProps) {
  const t = useI18n();
  const { isDragActive, getRootProps } = useDropzone({ onFiles, progressive, disabled });
  return (
    <div
      {...getRootProps(rest)}
      ref={ref}
      className={`ferry-dropzone ${className}`}
      data-over={isDragActive || undefined}
    >
      {children}
      {isDragActive && (
        <div className="ferry-drop-hint" aria-hidden="true">
          {t('dropHint')}
        </div>
      )}
    </div>
  );
}
