/** Human-readable sizes: 1023 B, 1.5 KB, 12 MB (powers of 1024, as file managers show). */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '?';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}
