/** One row per file: name, size, state and a progress bar. */
import { useFerry, useFerryState } from '../context.tsx';
import { formatBytes } from '../format.ts';

export function FileList() {
  const ids = useFerryState((s) => s.fileIds);
  if (ids.length === 0) return null;
  return (
    <ul className="ferry-files" aria-label="Files">
      {ids.map((id) => (
        <FileRow key={id} id={id} />
      ))}
    </ul>
  );
}

function FileRow({ id }: { id: string }) {
  const ferry = useFerry();
  const file = useFerryState((s) => s.files[id]);
  if (!file) return null;
  const { percentage } = file.progress;
  return (
    <li className="ferry-file" data-state={file.state} data-testid="ferry-file">
      <span className="ferry-file-name" title={file.name}>
        {file.name}
      </span>
      <span className="ferry-file-size">{formatBytes(file.size)}</span>
      <progress max={100} value={percentage} aria-label={`${file.name} upload progress`} />
      <span className="ferry-file-state">{file.error ? file.error.message : file.state}</span>
      {file.state !== 'uploading' && (
        <button
          type="button"
          className="ferry-link"
          onClick={() => ferry.removeFile(id)}
          aria-label={`Remove ${file.name}`}
        >
          ×
        </button>
      )}
    </li>
  );
}
