/**
 * A minimal observable store: `getState`, `subscribe` and a `dispatch` that runs one reducer.
 * Listeners run once per dispatch, so batching many changes into one action means one render.
 */
export type Listener<S> = (state: S, previous: S) => void;

export interface ReadableStore<S> {
  getState(): S;
  subscribe(listener: Listener<S>): () => void;
}

export class Store<S, A> implements ReadableStore<S> {
  #state: S;
  readonly #reduce: (state: S, action: A) => S;
  readonly #listeners = new Set<Listener<S>>();

  constructor(initial: S, reduce: (state: S, action: A) => S) {
    this.#state = initial;
    this.#reduce = reduce;
  }

  getState = (): S => this.#state;

  subscribe = (listener: Listener<S>): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  dispatch(action: A): void {
    const previous = this.#state;
    const next = this.#reduce(previous, action);
    if (next === previous) return;
    this.#state = next;
    for (const listener of this.#listeners) listener(next, previous);
  }
}
