/**
 * One entry of a provider folder: checkbox, thumbnail or icon, name (a folder's opens it), size or
 * file count, why it cannot be picked, and a search result's photographer (linked, as Unsplash asks).
 */
import { type FolderCount, formatSize, type ProviderItem as Item } from '@ferry/core';
import { type CSSProperties, memo } from 'react';
import { icons } from '../components/icons.tsx';
import { useI18n } from '../i18n.ts';

export interface ProviderItemProps {
  item: Item;
  index: number;
  setSize: number;
  selected: boolean;
  count: FolderCount | undefined;
  problem: string | null;
  grid: boolean;
  idPrefix: string;
  style: CSSProperties;
  onToggle(item: Item, range: boolean): void;
  onOpen(item: Item): void;
}

function Picture({ item, grid }: { item: Item; grid: boolean }) {
  const src = grid ? item.thumbnail || (isUrl(item.icon) ? item.icon : null) : isUrl(item.icon) ? item.icon : null;
  if (src) return <img className="ferry-provider-thumb" src={src} alt="" loading="lazy" decoding="async" />;
  return <span className="ferry-provider-thumb">{item.isFolder ? icons.folder : icons.file}</span>;
}

/** The attribution: a link to the author's profile when it is a web address, else the name. */
function Author({ name, url, text }: { name: string; url: string; text: string }) {
  if (!/^https?:\/\//.test(url)) return <span className="ferry-provider-author">{text}</span>;
  return (
    <a className="ferry-provider-author" href={url} target="_blank" rel="noopener noreferrer" title={name}>
      {text}
    </a>
  );
}

function isUrl(value: string | null | undefined): value is string {
  return typeof value === 'string' && /^(https?:|data:|\/)/.test(value);
}

export const ProviderItem = memo(function ProviderItem(props: ProviderItemProps) {
  const { item, index, setSize, selected, count, problem, grid, idPrefix, style, onToggle, onOpen } = props;
  const t = useI18n();
  const boxId = `${idPrefix}-${index}`;
  const noteId = `${boxId}-note`;
  let detail = '';
  if (problem) detail = problem;
  else if (item.isFolder && count) {
    const files = t('xFiles', { smart_count: count.files });
    detail = count.status === 'loading' ? `${files} · ${t('countingFiles')}` : files;
  } else if (!item.isFolder && typeof item.size === 'number' && item.size > 0) detail = formatSize(item.size);
  return (
    <li
      className="ferry-provider-item"
      data-index={index}
      data-selected={selected || undefined}
      data-disabled={problem ? true : undefined}
      data-testid="ferry-provider-item"
      aria-posinset={index + 1}
      aria-setsize={setSize}
      style={style}
    >
      <input
        id={boxId}
        type="checkbox"
        className="ferry-provider-check"
        checked={selected}
        disabled={problem !== null}
        aria-label={t('selectItem', { name: item.name })}
        aria-describedby={detail ? noteId : undefined}
        onChange={(e) => onToggle(item, (e.nativeEvent as MouseEvent).shiftKey === true)}
      />
      <Picture item={item} grid={grid} />
      {item.isFolder ? (
        <button
          type="button"
          className="ferry-provider-name ferry-provider-open"
          aria-label={t('openFolder', { name: item.name })}
          onClick={() => onOpen(item)}
        >
          {item.name}
        </button>
      ) : (
        <label htmlFor={boxId} className="ferry-provider-name" title={item.name}>
          {item.name}
        </label>
      )}
      {detail && (
        <span id={noteId} className="ferry-provider-detail" data-problem={problem ? true : undefined}>
          {detail}
        </span>
      )}
      {item.author?.name && (
        <Author name={item.author.name} url={item.author.url} text={t('byAuthor', { author: item.author.name })} />
      )}
    </li>
  );
});
