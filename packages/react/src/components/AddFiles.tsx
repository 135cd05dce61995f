/** The empty Dashboard's invitation: drop, browse files or folders, or pick another source. */
import { useI18n } from '../i18n.ts';
import { FileInput } from './FileInput.tsx';
import { icons } from './icons.tsx';

export interface SourceButton {
  id: string;
  label: string;
  icon: React.ReactNode;
  onClick(): void;
}

export function SourceButtons({ sources }: { sources: SourceButton[] }) {
  return (
    <>
      {sources.map((s) => (
        <button key={s.id} type="button" className="ferry-source" onClick={s.onClick} data-source={s.id}>
          {s.icon}
          <span>{s.label}</span>
        </button>
      ))}
    </>
  );
}

export function AddFiles({
  sources,
  folders = true,
  fileSystemAccess = false,
}: {
  sources: SourceButton[];
  folders?: boolean;
  fileSystemAccess?: boolean;
}) {
  const t = useI18n();
  const [before, after = ''] = t('dropPasteFiles', { browseFiles: '\u0000' }).split('\u0000');
  return (
    <div className="ferry-add">
      <p className="ferry-add-title">
        {before}
        <FileInput className="ferry-browse" fileSystemAccess={fileSystemAccess}>
          {t('browseFiles')}
        </FileInput>
        {after}
        {folders && (
          <>
            {' · '}
            <FileInput directory className="ferry-browse">
              {t('browseFolders')}
            </FileInput>
          </>
        )}
      </p>
      {sources.length > 0 && (
        <div className="ferry-sources">
          <span className="ferry-sources-label">{t('orImportFrom')}</span>
          <SourceButtons sources={sources} />
        </div>
      )}
    </div>
  );
}

export { icons };
