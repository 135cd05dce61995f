/**
 * A file's thumbnail, or its type icon. Mounting it asks the engine's generator for a preview,
 * so with the virtual list only visible rows make thumbnails.
 */
import { useEffect, useSyncExternalStore } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { thumbnailsFor } from '../thumbnails/generator.ts';
import { typeIcon } from './icons.tsx';

export function Thumbnail({ id }: { id: string }) {
  const ferry = useFerry();
  const t = useI18n();
  const preview = useFerryState((s) => s.files[id]?.preview);
  const type = useFerryState((s) => s.files[id]?.type ?? '');
  const generator = thumbnailsFor(ferry);
  const failed = useSyncExternalStore(
    generator.subscribe,
    () => generator.failed(id),
    () => false,
  );

  useEffect(() => {
    if (!preview) generator.request(id);
  }, [generator, id, preview]);

  if (preview) return <img className="ferry-thumb" src={preview} alt="" decoding="async" />;
  return (
    <span
      className="ferry-thumb ferry-thumb-icon"
      title={failed ? t('cannotReadImage') : undefined}
      data-failed={failed || undefined}
    >
      {typeIcon(type)}
    </span>
  );
}
