/**
 * The full upload UI built from the parts: drop zone with the file inputs, file list, status bar,
 * informer, and panels (link, camera, file card) sliding over it. Inline, or modal via {@link Modal}.
 */
import { type ClipboardEvent, type CSSProperties, type ReactNode, useEffect, useRef, useState } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { describe } from '../dom/entries.ts';
import { screenCaptureSupported } from '../dom/screen.ts';
import { usePageDrop } from '../hooks/usePageDrop.ts';
import { useI18n, useLocale } from '../i18n.ts';
import { Camera, type CameraProps } from '../panels/Camera.tsx';
import { ImageEditor, type ImageEditorOptions } from '../panels/ImageEditor.tsx';
import { importLinkWithToast, LinkImport } from '../panels/LinkImport.tsx';
import { ScreenCapture, type ScreenCaptureProps } from '../panels/ScreenCapture.tsx';
import { PickerPanel } from '../providers/PickerPanel.tsx';
import { ProviderPanel } from '../providers/ProviderPanel.tsx';
import { useProviderList } from '../providers/useProviderBrowser.ts';
import { AddFiles, type SourceButton, SourceButtons } from './AddFiles.tsx';
import { DropZone } from './DropZone.tsx';
import { FileCard, type MetaField } from './FileCard.tsx';
import { FileInput } from './FileInput.tsx';
import { FileList } from './FileList.tsx';
import { Informer } from './Informer.tsx';
import { icons } from './icons.tsx';
import { Modal, type ModalOptions } from './Modal.tsx';
import { Panel } from './Panel.tsx';
import { RecoveryBanner } from './RecoveryBanner.tsx';
import { StatusBar } from './StatusBar.tsx';

export type Theme = 'light' | 'dark' | 'auto';

export interface DashboardProps extends ModalOptions {
  /** Render in the page flow (default) or, with `modal`, as a dialog opened by `open`. */
  inline?: boolean;
  modal?: boolean;
  width?: number | string;
  height?: number | string;
  theme?: Theme;
  /**
   * Enables the link-import panel, talking to the engine's companion (`new Ferry({ companionUrl })`).
   * The `{ companionUrl }` form is deprecated: it overrides the engine's, as before.
   */
  link?: boolean | { companionUrl?: string };
  /** Enables the camera panel. */
  camera?: CameraProps | boolean;
  /** Enables the screen-capture panel (screenshot, recording) where the browser can capture. */
  screenCapture?: ScreenCaptureProps | boolean;
  /** Enables cropping, turning and mirroring images from the file card (off by default). */
  imageEditor?: ImageEditorOptions | boolean;
  /** Once uploaded, each file links to its result: open it, copy its link (off by default). */
  resultLinks?: boolean;
  /** Files dropped anywhere on the page are added, not only on the Dashboard (off by default). */
  pageDrop?: boolean;
  /**
   * Pick files through the File System Access API where the browser has it, so recovery keeps
   * handles instead of copies (default false: the classic file input).
   */
  fileSystemAccess?: boolean;
  /** Offer "browse folders" beside "browse files" (default true). */
  folders?: boolean;
  /** Meta fields the file card edits (default: name). */
  metaFields?: MetaField[];
  /** Done in the complete state; by default clears the list (and closes the modal). */
  onDone?(): void;
  /**
   * Cloud provider sources through the engine's companion: ids (`['drive', 'instagram']`), or
   * `true` for those the companion enables (`GET /providers`). Google's pickers
   * (`google-drive-picker`, `google-photos-picker`) need the page's Google app in
   * `providerOptions.googlePicker`; without it they stay hidden.
   */
  providers?: readonly string[] | boolean;
  /** Extra panels: `{ id, label, icon, render }`. */
  panels?: ExtraPanel[];
}

export interface ExtraPanel {
  id: string;
  label: string;
  icon?: ReactNode;
  render(close: () => void): ReactNode;
}

type View =
  | { kind: 'main' }
  | { kind: 'panel'; id: string }
  | { kind: 'card'; fileId: string }
  | { kind: 'editor'; fileId: string };

export function Dashboard(props: DashboardProps) {
  const { modal, width = 750, height = 550, theme = 'light' } = props;
  const t = useI18n();
  const style: CSSProperties = modal ? {} : { width, height };
  const body = <DashboardBody {...props} style={style} data-theme={theme} label={t('dashboardLabel')} />;
  if (!modal) return body;
  return (
    <Modal {...props} width={width} height={height} theme={theme}>
      {body}
    </Modal>
  );
}

function DashboardBody(props: DashboardProps & { style: CSSProperties; 'data-theme': Theme; label: string }) {
  const {
    link,
    camera,
    screenCapture,
    imageEditor,
    folders = true,
    metaFields,
    panels = [],
    fileSystemAccess = false,
  } = props;
  const providers = useProviderList(props.providers);
  const companionUrl = typeof link === 'object' ? link.companionUrl : undefined;
  const ferry = useFerry();
  const t = useI18n();
  const locale = useLocale();
  const [view, setViewState] = useState<View>({ kind: 'main' });
  const hasFiles = useFerryState((s) => s.fileIds.length > 0);
  const count = useFerryState((s) => s.fileIds.length);
  // The control that opened a panel gets focus back when the panel closes.
  const opener = useRef<HTMLElement | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const setView = (next: View) => {
    if (next.kind !== 'main' && view.kind === 'main') opener.current = document.activeElement as HTMLElement | null;
    setViewState(next);
  };
  const main = () => setView({ kind: 'main' });
  const pageOver = usePageDrop(props.pageDrop === true, root);
  useEffect(() => {
    if (view.kind !== 'main' || !opener.current) return;
    const target = opener.current.isConnected ? opener.current : root.current;
    opener.current = null;
    target?.focus();
  }, [view.kind]);

  const sources: SourceButton[] = [];
  if (link)
    sources.push({
      id: 'link',
      label: t('link'),
      icon: icons.link,
      onClick: () => setView({ kind: 'panel', id: 'link' }),
    });
  if (camera)
    sources.push({
      id: 'camera',
      label: t('camera'),
      icon: icons.camera,
      onClick: () => setView({ kind: 'panel', id: 'camera' }),
    });
  if (screenCapture && screenCaptureSupported())
    sources.push({
      id: 'screen',
      label: t('screenCapture'),
      icon: icons.screen,
      onClick: () => setView({ kind: 'panel', id: 'screen' }),
    });
  for (const p of providers)
    sources.push({
      id: p.id,
      label: p.name,
      icon: icons.cloud,
      onClick: () => setView({ kind: 'panel', id: `provider:${p.id}` }),
    });
  for (const p of panels)
    sources.push({
      id: p.id,
      label: p.label,
      icon: p.icon ?? icons.folder,
      onClick: () => setView({ kind: 'panel', id: p.id }),
    });

  const onPaste = (event: ClipboardEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    if (target.closest('input, textarea, [contenteditable="true"]')) return;
    const data = event.clipboardData;
    const files = Array.from(data.files ?? []);
    if (files.length > 0) {
      event.preventDefault();
      ferry.addFiles(files.map((f) => describe(f)));
      return;
    }
    const text = data.getData('text/plain').trim();
    if (link && /^(https?:\/\/|www\.)\S+$/i.test(text)) {
      event.preventDefault();
      void importLinkWithToast(ferry, t, text, companionUrl);
    }
  };

  const onDone =
    props.onDone ??
    (() => {
      ferry.removeFiles([...ferry.getState().fileIds]);
      props.onRequestClose?.();
    });

  let panel: ReactNode = null;
  if (view.kind === 'card') {
    panel = (
      <Panel name="card" title={t('editFile')} onBack={main}>
        <FileCard
          id={view.fileId}
          metaFields={metaFields}
          onDone={main}
          onEditImage={imageEditor ? () => setViewState({ kind: 'editor', fileId: view.fileId }) : undefined}
        />
      </Panel>
    );
  } else if (view.kind === 'editor') {
    panel = (
      <Panel name="editor" title={t('imageEditor')} onBack={main}>
        <ImageEditor id={view.fileId} onDone={main} {...(imageEditor === true ? {} : imageEditor)} />
      </Panel>
    );
  } else if (view.kind === 'panel' && view.id === 'screen' && screenCapture) {
    panel = (
      <Panel name="screen" title={t('screenCapture')} onBack={main}>
        <ScreenCapture
          maxFileSize={ferry.restrictions.maxFileSize}
          {...(screenCapture === true ? {} : screenCapture)}
          onCaptured={main}
        />
      </Panel>
    );
  } else if (view.kind === 'panel' && view.id === 'link' && link) {
    panel = (
      <Panel name="link" title={t('link')} onBack={main}>
        <LinkImport companionUrl={companionUrl} onImported={main} />
      </Panel>
    );
  } else if (view.kind === 'panel' && view.id === 'camera' && camera) {
    panel = (
      <Panel name="camera" title={t('camera')} onBack={main}>
        <Camera maxFileSize={ferry.restrictions.maxFileSize} {...(camera === true ? {} : camera)} onCaptured={main} />
      </Panel>
    );
  } else if (view.kind === 'panel' && view.id.startsWith('provider:')) {
    const info = providers.find((p) => `provider:${p.id}` === view.id);
    if (info)
      panel = (
        <Panel name={view.id} title={info.name} onBack={main}>
          {info.picker ? (
            <PickerPanel provider={info.id} onAdded={main} />
          ) : (
            <ProviderPanel provider={info.id} onAdded={main} />
          )}
        </Panel>
      );
  } else if (view.kind === 'panel') {
    const extra = panels.find((p) => p.id === view.id);
    if (extra)
      panel = (
        <Panel name={extra.id} title={extra.label} onBack={main}>
          {extra.render(main)}
        </Panel>
      );
  }

  return (
    <DropZone
      ref={root}
      className="ferry-dashboard"
      style={props.style}
      data-theme={props['data-theme']}
      dir={locale.direction}
      lang={locale.code}
      role="region"
      aria-label={props.label}
      tabIndex={-1}
      onPaste={onPaste}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && view.kind !== 'main') {
          e.stopPropagation();
          main();
        }
      }}
    >
      <div className="ferry-main" inert={panel !== null}>
        <RecoveryBanner />
        {hasFiles ? (
          <>
            <div className="ferry-toolbar">
              <span className="ferry-toolbar-title">{t('xFilesSelected', { smart_count: count })}</span>
              <span className="ferry-toolbar-actions">
                <FileInput className="ferry-source" fileSystemAccess={fileSystemAccess}>
                  {t('addMore')}
                </FileInput>
                {folders && (
                  <FileInput directory className="ferry-source">
                    {t('browseFolders')}
                  </FileInput>
                )}
                <SourceButtons sources={sources} />
              </span>
            </div>
            <FileList onEdit={(fileId) => setView({ kind: 'card', fileId })} resultLinks={props.resultLinks} />
          </>
        ) : (
          <AddFiles sources={sources} folders={folders} fileSystemAccess={fileSystemAccess} />
        )}
        <StatusBar onDone={onDone} />
      </div>
      {panel}
      <Informer />
      {pageOver && (
        <div className="ferry-page-drop" aria-hidden="true">
          {t('dropHint')}
        </div>
      )}
    </DropZone>
  );
}
