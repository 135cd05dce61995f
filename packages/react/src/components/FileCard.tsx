/** Edits one file's meta fields (name by default), and shows an error's detail. */

import { type FormEvent, useId } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { editableImage } from '../panels/ImageEditor.tsx';
import { FileSize } from './FileSize.tsx';
import { icons } from './icons.tsx';
import { Thumbnail } from './Thumbnail.tsx';

export interface MetaField {
  id: string;
  name: string;
  placeholder?: string;
}

export interface FileCardProps {
  id: string;
  metaFields?: MetaField[];
  onDone(): void;
  /** Opens the image editor; the button shows for images that can still change. */
  onEditImage?(): void;
}

export function FileCard({ id, metaFields, onDone, onEditImage }: FileCardProps) {
  const ferry = useFerry();
  const t = useI18n();
  const file = useFerryState((s) => s.files[id]);
  const formId = useId();
  if (!file) return null;
  const fields = metaFields ?? [{ id: 'name', name: t('fileName') }];
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const meta: Record<string, string> = {};
    for (const field of fields) meta[field.id] = String(data.get(field.id) ?? '');
    ferry.setFileMeta(id, meta);
    onDone();
  };
  return (
    <form className="ferry-card" onSubmit={submit} aria-label={t('editing', { file: file.name })}>
      <div className="ferry-card-preview">
        <Thumbnail id={id} />
        <span>
          {file.name} · <FileSize file={file} />
        </span>
        {onEditImage &&
          file.data &&
          editableImage(file.type) &&
          (file.state === 'waiting' || file.state === 'error') && (
            <button type="button" className="ferry-button" onClick={onEditImage}>
              {icons.edit}
              {t('editImage')}
            </button>
          )}
      </div>
      {file.error && (
        <div className="ferry-card-error" role="alert">
          <strong>{file.error.message}</strong>
          {file.error.details && <p>{file.error.details}</p>}
          {file.error.status !== undefined && <p>HTTP {file.error.status}</p>}
        </div>
      )}
      {fields.map((field) => (
        <label key={field.id} className="ferry-field" htmlFor={`${formId}-${field.id}`}>
          <span>{field.name}</span>
          <input
            id={`${formId}-${field.id}`}
            name={field.id}
            defaultValue={file.meta[field.id] ?? ''}
            placeholder={field.placeholder}
          />
        </label>
      ))}
      <div className="ferry-card-actions">
        <button type="button" className="ferry-button" onClick={onDone}>
          {t('cancel')}
        </button>
        <button type="submit" className="ferry-button ferry-primary">
          {t('saveChanges')}
        </button>
      </div>
    </form>
  );
}
