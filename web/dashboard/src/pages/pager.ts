import { query } from "../api.js";
import { h } from "../dom.js";

/**
 * First/Next page links of a list read a cursor page at a time (`#/<route>?cursor=`): First
 * when this page is not the first, Next when the answer had a nextCursor; null when neither.
 */
export function cursorPager(
  route: string,
  cursor: string | null,
  nextCursor: string | null,
): HTMLElement | null {
  const nav = h("nav", { class: "pager", "aria-label": "Pages" });
  if (cursor !== null) nav.append(h("a", { href: route, class: "button quiet" }, "First page"));
  if (nextCursor) {
    nav.append(
      h("a", { href: `${route}${query({ cursor: nextCursor })}`, class: "button" }, "Next page"),
    );
  }
  return nav.childElementCount > 0 ? nav : null;
}
