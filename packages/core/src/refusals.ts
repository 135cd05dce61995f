/**
 * Tells restriction refusals in one toast. Files can be refused in several batches close
 * together: a dropped folder comes in parts, and size restrictions refuse files as their sizes
 * are read. While the toast of earlier refusals still shows, later ones join its count ("… and 7
 * more") instead of stacking a toast per batch; once it is gone, the next refusal starts anew.
 */
import type { LocaleVars } from './locale.ts';
import type { Rejection } from './restrictions.ts';
import type { InfoType } from './types.ts';

/** How long a refusal toast shows, in ms; restarted when more refusals join it. */
export const REFUSAL_TOAST_MS = 5000;

export interface RefusalHost {
  /** Whether the toast `id` still shows. */
  showing(id: string): boolean;
  /** Shows a new toast; its id. */
  info(message: string, type: InfoType, duration: number): string;
  /** Replaces the text of the showing toast `id` and restarts its duration. */
  update(id: string, message: string, type: InfoType, duration: number): void;
  i18n(key: string, vars?: LocaleVars): string;
}

/** One line for `count` refusals: the first one's message, plus how many more. */
export function refusalSummary(first: Rejection, count: number, i18n: RefusalHost['i18n']): string {
  return count <= 1 ? first.message : i18n('andNMore', { message: first.message, smart_count: count - 1 });
}

export class Refusals {
  readonly #host: RefusalHost;
  /** The toast that shows the tally, the refusal it names and how many it counts. */
  #tally: { id: string; first: Rejection; count: number } | null = null;

  constructor(host: RefusalHost) {
    this.#host = host;
  }

  /** Tells a batch of refusals (nothing for an empty one). */
  tell(rejections: readonly Rejection[]): void {
    const first = rejections[0];
    if (!first) return;
    const tally = this.#tally;
    if (tally && this.#host.showing(tally.id)) {
      tally.count += rejections.length;
      this.#host.update(tally.id, refusalSummary(tally.first, tally.count, this.#host.i18n), 'error', REFUSAL_TOAST_MS);
      return;
    }
    const message = refusalSummary(first, rejections.length, this.#host.i18n);
    this.#tally = { id: this.#host.info(message, 'error', REFUSAL_TOAST_MS), first, count: rejections.length };
  }
}
