import type { LiveFeed } from "../live.js";

/** What a page gets: where to draw, the route's parameters and the shared live feed. */
export interface PageContext {
  readonly root: HTMLElement;
  readonly params: URLSearchParams;
  readonly live: LiveFeed;
  /** Navigates to another hash route. */
  go(hash: string): void;
}

/** A page draws itself and returns a disposer (timers, charts, live listeners). */
export type Page = (ctx: PageContext, arg?: string) => () => void;
