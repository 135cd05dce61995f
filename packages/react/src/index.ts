/**
 * @ferry/react: React bindings for @ferry/core. Components read state only through
 * {@link useFerryState}; none holds upload state of its own.
 *
 * Layout: `context.tsx` (provider and hooks), `i18n.ts` (strings via `ferry.i18n`),
 * `dom/` (framework-free drop, folder reading, camera, screen capture, clipboard), `hooks/`
 * (useDropzone, usePageDrop, useCamera, useVirtualList),
 * `thumbnails/` (off-main-thread previews), `components/` (Dashboard and its parts),
 * `panels/` (link import, camera, screen capture, image editor), `providers/` (cloud provider
 * panel: auth view, browser header, virtualised items, selection bar), `speed.ts` (smoothed speed and ETA).
 */
export { AddFiles } from './components/AddFiles.tsx';
export { Dashboard, type DashboardProps, type ExtraPanel, type Theme } from './components/Dashboard.tsx';
export { DropZone, type DropZoneProps } from './components/DropZone.tsx';
export { FileCard, type MetaField } from './components/FileCard.tsx';
export { FileInput, type FileInputProps } from './components/FileInput.tsx';
export { FileList } from './components/FileList.tsx';
export { FileRow } from './components/FileRow.tsx';
export { Informer } from './components/Informer.tsx';
export { Modal, type ModalOptions } from './components/Modal.tsx';
export { RecoveryBanner } from './components/RecoveryBanner.tsx';
export { ResultLinks } from './components/ResultLinks.tsx';
export { overallState, StatusBar } from './components/StatusBar.tsx';
export { StatusErrors } from './components/StatusErrors.tsx';
export { Thumbnail } from './components/Thumbnail.tsx';
export { FerryProvider, useFerry, useFerryState } from './context.tsx';
export {
  type Camera as CameraSession,
  type CameraMode,
  type CameraOptions,
  type CameraState,
  createCamera,
} from './dom/camera.ts';
export { absoluteUrl, copyText } from './dom/clipboard.ts';
export { createDropzone, type Dropzone, type DropzoneOptions } from './dom/dropzone.ts';
export { type FilesSink, filesFromDataTransfer, walkDataTransfer } from './dom/entries.ts';
export { extensionFor } from './dom/record.ts';
export {
  createScreenCapture,
  type ScreenCapture as ScreenCaptureSession,
  type ScreenCaptureOptions,
  type ScreenCaptureState,
  screenCaptureSupported,
} from './dom/screen.ts';
export { type UseCamera, type UseCameraOptions, useCamera } from './hooks/useCamera.ts';
export { useDropzone } from './hooks/useDropzone.ts';
export { usePageDrop } from './hooks/usePageDrop.ts';
export { useRecovery } from './hooks/useRecovery.ts';
export { useVirtualList, visibleRange } from './hooks/useVirtualList.ts';
export { type Translate, useI18n, useLocale } from './i18n.ts';
export { Camera, type CameraProps } from './panels/Camera.tsx';
export { editableImage, ImageEditor, type ImageEditorOptions, type ImageEditorProps } from './panels/ImageEditor.tsx';
export { LinkImport, type LinkImportProps } from './panels/LinkImport.tsx';
export { ScreenCapture, type ScreenCaptureProps } from './panels/ScreenCapture.tsx';
export { ProviderPanel, type ProviderPanelProps } from './providers/ProviderPanel.tsx';
export { useProviderBrowser, useProviderList } from './providers/useProviderBrowser.ts';
export { createSpeedEstimator } from './speed.ts';
export { ThumbnailGenerator, thumbnailsFor } from './thumbnails/generator.ts';
