/**
 * The links of an uploaded file (like Uppy's `showLinkToFileUploadResult`): open what was stored
 * in a new tab, or copy its address; a copy the browser refuses shows the address to copy by hand.
 */
import { useFerry } from '../context.tsx';
import { absoluteUrl, copyText } from '../dom/clipboard.ts';
import { useI18n } from '../i18n.ts';
import { icons } from './icons.tsx';

export function ResultLinks({ url, name }: { url: string; name: string }) {
  const ferry = useFerry();
  const t = useI18n();
  const href = absoluteUrl(url);
  const copy = async () => {
    if (await copyText(href)) ferry.info(t('linkCopied'), 'success', 3000);
    else ferry.info({ message: t('copyLinkFallback'), details: href }, 'info', 0);
  };
  return (
    <>
      <a
        className="ferry-icon-button"
        href={href}
        target="_blank"
        rel="noopener noreferrer"
        aria-label={`${t('openFile')} ${name}`}
        title={t('openFile')}
        data-testid="ferry-result-link"
      >
        {icons.open}
      </a>
      <button
        type="button"
        className="ferry-icon-button"
        onClick={() => void copy()}
        aria-label={`${t('copyLink')} ${name}`}
        title={t('copyLink')}
      >
        {icons.copy}
      </button>
    </>
  );
}
