/**
 * The Assembly Status JSON a Transloadit-compatible service answers (Ferry's `ferry serve`, or
 * Transloadit itself), the parts the widget reads, and how a status maps onto one file: which
 * upload is that file, which step results came from it, how far execution is.
 */
import type { AssemblyResult } from '../types.ts';

/** A file object of `uploads[]`: the original as the service received it. */
export interface AssemblyUpload {
  id: string;
  name?: string;
  size?: number;
  tus_upload_url?: string;
  [key: string]: unknown;
}

export interface AssemblyStatus {
  ok?: string | null;
  error?: string | null;
  message?: string | null;
  assembly_id?: string;
  assembly_url?: string;
  assembly_ssl_url?: string;
  tus_url?: string;
  uploads?: AssemblyUpload[];
  results?: Record<string, AssemblyResult[]>;
  /** Execution progress 0..100 when the service reports it (the update stream's `progress_combined`). */
  progress_combined?: number;
  [key: string]: unknown;
}

/** Still running: more polling needed. */
export function isBusy(status: AssemblyStatus): boolean {
  return (
    !status.error &&
    (status.ok === 'ASSEMBLY_UPLOADING' || status.ok === 'ASSEMBLY_EXECUTING' || status.ok === 'ASSEMBLY_REPLAYING')
  );
}

/** The service's words for a failed or cancelled Assembly, undefined when it completed. */
export function failureOf(status: AssemblyStatus): string | undefined {
  if (status.error) return status.message || status.error;
  if (status.ok === 'ASSEMBLY_COMPLETED') return undefined;
  return status.message || status.ok || 'The assembly ended without completing';
}

/** The status URL: the https flavour when there is one, as Uppy and the SDK do. */
export function statusUrl(status: AssemblyStatus): string | undefined {
  return status.assembly_ssl_url || status.assembly_url;
}

/**
 * The upload that is this file: by the tus upload URL it used (what the service records), else
 * by name and size (an Assembly may hold two files of one name, so the URL comes first).
 */
export function uploadOf(
  status: AssemblyStatus,
  file: { uploadURL?: string; name: string; size: number | null },
): AssemblyUpload | undefined {
  const uploads = status.uploads ?? [];
  const byUrl = file.uploadURL ? uploads.find((u) => u.tus_upload_url === file.uploadURL) : undefined;
  return byUrl ?? uploads.find((u) => u.name === file.name && (file.size === null || u.size === file.size));
}

/** The step results made from `upload`, by step name; steps with none for it are left out. */
export function resultsOf(status: AssemblyStatus, upload: AssemblyUpload): Record<string, AssemblyResult[]> {
  const out: Record<string, AssemblyResult[]> = {};
  for (const [step, files] of Object.entries(status.results ?? {})) {
    const mine = files.filter((r) => r.original_id === upload.id);
    if (mine.length > 0) out[step] = mine;
  }
  return out;
}

/** Execution progress 0..1 when the service reports one. */
export function executionProgress(status: AssemblyStatus): number | undefined {
  const p = status.progress_combined;
  return typeof p === 'number' && Number.isFinite(p) ? Math.min(1, Math.max(0, p / 100)) : undefined;
}
