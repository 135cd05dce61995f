/**
 * Tells restriction refusals in one toast. Files can be refused in several batches close
 * together: a dropped folder comes in parts, and size restrictions refuse files as their sizes
 * are read. While the toast of earlier refusals still shows, later ones join its count ("… and 7
 * more") instead of stacking a toast per batch; once it is gone, the next refusal starts anew.
 */

import type { Informer } from './informer.ts';
import type { LocaleVars } from './locale.ts';
import type { Rejection } from './restrictions.ts';

/** How long a refusal toast shows, in ms; restarted when more refusals join it. */
export const REFUSAL_TOAST_MS = 5000;

/** The informer's part that refusals use (see `informer.ts`). */
export type RefusalToasts = Pick<Informer, 'showing' | 'info' | 'update'>;

type Translate = (key: string, vars?: LocaleVars) => string;

/** One line for `count` refusals: the first one's message, plus how many more. */
function refusalSummary(first: Rejection, count: number, i18n: Translate): string {
  return count <= 1 ? first.message : i18n('andNMore', { message: first.message, smart_count: count - 1 });
}

export class Refusals {
  readonly #toasts: RefusalToasts;
  readonly #i18n: Translate;
  /** The toast that shows the tally, the refusal it names and how many it counts. */
  #tally: { id: string; first: Rejection; count: number } | null = null;

  constructor(toasts: RefusalToasts, i18n: Translate) {
    this.#toasts = toasts;
    this.#i18n = i18n;
  }

  /** Tells a batch of refusals (nothing for an empty one). */
  tell(rejections: readonly Rejection[]): void {
    const first = rejections[0];
    if (!first) return;
    const tally = this.#tally;
    if (tally && this.#toasts.showing(tally.id)) {
      tally.count += rejections.length;
      this.#toasts.update(tally.id, refusalSummary(tally.first, tally.count, this.#i18n), 'error', REFUSAL_TOAST_MS);
      return;
    }
    const message = refusalSummary(first, rejections.length, this.#i18n);
    this.#tally = { id: this.#toasts.info(message, 'error', REFUSAL_TOAST_MS), first, count: rejections.length };
  }
}
