/**
 * What a processing service made of a file (`file.results`, the `assembly` option): one line under
 * the name, in the place the progress bar had, so rows keep their fixed height. Image outputs are
 * small thumbnails linking to the full output, other outputs are links by name; each names its
 * step in its title.
 */
import type { AssemblyResult } from '@ferry/core';

/** The address of a result: its https URL when the service gave one. */
function href(result: AssemblyResult): string | undefined {
  const url = result.ssl_url ?? result.url;
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : undefined;
}

export function ProcessedResults({ results }: { results: Record<string, AssemblyResult[]> }) {
  const items = Object.entries(results).flatMap(([step, files]) =>
    files.map((result, i) => ({ step, result, key: `${step}-${result.id ?? i}`, url: href(result) })),
  );
  if (items.length === 0) return null;
  return (
    <ul className="ferry-file-results" data-testid="ferry-file-results">
      {items.map(({ step, result, key, url }) => {
        const name = result.name ?? step;
        const title = `${step}: ${name}`;
        if (!url) return null;
        return (
          <li key={key}>
            <a href={url} target="_blank" rel="noopener noreferrer" title={title} data-step={step}>
              {result.mime?.startsWith('image/') ? <img src={url} alt={title} loading="lazy" /> : name}
            </a>
          </li>
        );
      })}
    </ul>
  );
}
