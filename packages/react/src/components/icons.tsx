/** The few icons the Dashboard draws, inline so there is nothing else to load. */
import type { ReactNode } from 'react';

function Svg({ children }: { children: ReactNode }) {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      {children}
    </svg>
  );
}

const stroke = {
  fill: 'none',
  stroke: 'currentColor',
  strokeWidth: 2,
  strokeLinecap: 'round',
  strokeLinejoin: 'round',
} as const;

export const icons = {
  device: (
    <Svg>
      <rect x="3" y="4" width="18" height="12" rx="2" {...stroke} />
      <path d="M8 20h8M12 16v4" {...stroke} />
    </Svg>
  ),
  link: (
    <Svg>
      <path
        d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"
        {...stroke}
      />
    </Svg>
  ),
  camera: (
    <Svg>
      <path d="M4 8h3l2-3h6l2 3h3v11H4z" {...stroke} />
      <circle cx="12" cy="13" r="3.5" {...stroke} />
    </Svg>
  ),
  folder: (
    <Svg>
      <path d="M3 6h6l2 2h10v11H3z" {...stroke} />
    </Svg>
  ),
  cloud: (
    <Svg>
      <path d="M7 18h10a4 4 0 0 0 .5-8A6 6 0 0 0 6 9.5 4.3 4.3 0 0 0 7 18z" {...stroke} />
    </Svg>
  ),
  file: (
    <Svg>
      <path d="M6 3h8l5 5v13H6zM14 3v5h5" {...stroke} />
    </Svg>
  ),
  close: (
    <Svg>
      <path d="M6 6l12 12M18 6L6 18" {...stroke} />
    </Svg>
  ),
  pause: (
    <Svg>
      <path d="M9 6v12M15 6v12" {...stroke} />
    </Svg>
  ),
  play: (
    <Svg>
      <path d="M8 5l11 7-11 7z" {...stroke} />
    </Svg>
  ),
  retry: (
    <Svg>
      <path d="M4 12a8 8 0 1 0 3-6.2M4 4v5h5" {...stroke} />
    </Svg>
  ),
  edit: (
    <Svg>
      <path d="M4 20h4L19 9l-4-4L4 16zM14 6l4 4" {...stroke} />
    </Svg>
  ),
  back: (
    <Svg>
      <path d="M15 6l-6 6 6 6" {...stroke} />
    </Svg>
  ),
  open: (
    <Svg>
      <path d="M14 4h6v6M20 4l-9 9M18 14v6H4V6h6" {...stroke} />
    </Svg>
  ),
  copy: (
    <Svg>
      <rect x="8" y="8" width="12" height="12" rx="2" {...stroke} />
      <path d="M16 8V4H4v12h4" {...stroke} />
    </Svg>
  ),
  screen: (
    <Svg>
      <rect x="3" y="4" width="18" height="12" rx="2" {...stroke} />
      <path d="M12 16v4M8 20h8M9 10l3-3 3 3M12 7v6" {...stroke} />
    </Svg>
  ),
  rotateLeft: (
    <Svg>
      <path d="M4 4v5h5M4.5 9A8 8 0 1 1 6 17" {...stroke} />
    </Svg>
  ),
  rotateRight: (
    <Svg>
      <path d="M20 4v5h-5M19.5 9A8 8 0 1 0 18 17" {...stroke} />
    </Svg>
  ),
  flipHorizontal: (
    <Svg>
      <path d="M12 3v18M9 6L3 18h6zM15 6l6 12h-6z" {...stroke} />
    </Svg>
  ),
  flipVertical: (
    <Svg>
      <path d="M3 12h18M6 9L18 3v6zM6 15l12 6v-6z" {...stroke} />
    </Svg>
  ),
};

/** A glyph for a file type, shown until (or instead of) a thumbnail. */
export function typeIcon(type: string): ReactNode {
  const kind = type.split('/')[0];
  const label =
    kind === 'image' ? 'IMG' : kind === 'video' ? 'VID' : kind === 'audio' ? 'AUD' : type.includes('pdf') ? 'PDF' : '';
  return (
    <span className="ferry-type-icon" data-kind={kind || 'other'} aria-hidden="true">
      {icons.file}
      {label && <span className="ferry-type-label">{label}</span>}
    </span>
  );
}
