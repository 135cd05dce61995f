/**
 * The message after a reload: "restored N files", what to do for ghosts, a button to allow file
 * access again (kept handles need a click to ask), and one to discard what came back.
 */
import { useFerry } from '../context.tsx';
import { useRecovery } from '../hooks/useRecovery.ts';
import { useI18n } from '../i18n.ts';
import { icons } from './icons.tsx';

export function RecoveryBanner() {
  const ferry = useFerry();
  const t = useI18n();
  const snapshot = useRecovery();
  const recovery = ferry.recovery;
  if (!recovery || !snapshot || snapshot.restored === 0) return null;
  const ghosts = snapshot.ghosts.length;
  return (
    <div className="ferry-recovery" role="status" data-testid="ferry-recovery">
      <span className="ferry-recovery-text">
        {t('recoveredFiles', { smart_count: snapshot.restored })}
        {ghosts > 0 && ` ${t('recoveredGhosts', { smart_count: ghosts })}`}
      </span>
      {snapshot.needPermission.length > 0 && (
        <button type="button" className="ferry-button" onClick={() => void recovery.reconnect()}>
          {t('allowFileAccess')}
        </button>
      )}
      <button type="button" className="ferry-button" onClick={() => recovery.discard()}>
        {t('discardRecovered')}
      </button>
      <button
        type="button"
        className="ferry-icon-button"
        onClick={() => recovery.dismiss()}
        aria-label={t('dismiss')}
        title={t('dismiss')}
      >
        {icons.close}
      </button>
    </div>
  );
}
