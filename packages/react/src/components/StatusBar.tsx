/** Total progress and the Upload action. */
import { useFerry, useFerryState } from '../context.tsx';

export function StatusBar() {
  const ferry = useFerry();
  const total = useFerryState((s) => s.totalProgress);
  const counts = useFerryState((s) => countKey(s.fileIds, s.files));
  const [waiting, uploading, complete, failed] = counts.split(':').map(Number) as [number, number, number, number];
  const all = waiting + uploading + complete + failed;
  if (all === 0) return null;

  let label: string;
  if (uploading > 0) label = `Uploading: ${total}%`;
  else if (failed > 0) label = `${failed} failed`;
  else if (waiting === 0) label = 'Complete';
  else label = `${waiting} file${waiting === 1 ? '' : 's'} ready`;

  return (
    <div className="ferry-status" role="status" aria-live="polite">
      <progress max={100} value={total} aria-label="Total upload progress" />
      <span className="ferry-status-label" data-testid="ferry-status">
        {label}
      </span>
      {waiting > 0 && uploading === 0 && (
        <button type="button" className="ferry-button ferry-primary" onClick={() => void ferry.upload()}>
          Upload {waiting} file{waiting === 1 ? '' : 's'}
        </button>
      )}
    </div>
  );
}

/** Counts by state as one string, so the selector result compares by value. */
function countKey(ids: readonly string[], files: Readonly<Record<string, { state: string }>>): string {
  let waiting = 0;
  let uploading = 0;
  let complete = 0;
  let failed = 0;
  for (const id of ids) {
    const state = files[id]?.state;
    if (state === 'waiting') waiting += 1;
    else if (state === 'complete') complete += 1;
    else if (state === 'error') failed += 1;
    else uploading += 1;
  }
  return `${waiting}:${uploading}:${complete}:${failed}`;
}
