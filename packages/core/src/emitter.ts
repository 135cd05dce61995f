type AnyHandler = (...args: never[]) => void;

/** A small typed event emitter: `on` returns the function that removes the handler. */
export class Emitter<Events extends Record<string, unknown[]>> {
  readonly #handlers = new Map<keyof Events, Set<AnyHandler>>();

  on<E extends keyof Events>(event: E, handler: (...args: Events[E]) => void): () => void {
    let set = this.#handlers.get(event);
    if (!set) {
      set = new Set();
      this.#handlers.set(event, set);
    }
    set.add(handler as unknown as AnyHandler);
    return () => this.off(event, handler);
  }

  off<E extends keyof Events>(event: E, handler: (...args: Events[E]) => void): void {
    this.#handlers.get(event)?.delete(handler as unknown as AnyHandler);
  }

  emit<E extends keyof Events>(event: E, ...args: Events[E]): void {
    const set = this.#handlers.get(event);
    if (!set) return;
    for (const handler of [...set]) (handler as unknown as (...a: Events[E]) => void)(...args);
  }
}
