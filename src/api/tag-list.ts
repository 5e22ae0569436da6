import { InvalidJobError } from "../core/errors.js";
import type { Job } from "../core/job.js";
import type { Store } from "../store/store.js";
import { decodeTagCursor, encodeTagCursor, type ParsedListQuery } from "./list-query.js";
import type { ListPage } from "./scheduler-types.js";

/** Index entries read per store call while a page of a tag fills. */
const TAG_READ_CHUNK = 200;

/**
 * A page of the jobs carrying `filter.tag`, in job id order, from the store's tag index:
 * reads of at most TAG_READ_CHUNK entries (or the page's size) until the page is full or
 * the tag's entries end, so the cost tracks the tag's jobs read, never the backlog. The
 * cursor is the last job id returned; when it is not null the next page may still be empty
 * (the entries after it may match nothing).
 */
export async function listByTag(
  store: Store,
  q: ParsedListQuery,
  defaultTenant: string,
): Promise<ListPage> {
  const { tag, ...rest } = q.filter;
  if (tag === undefined) throw new InvalidJobError("tag", "a tag", tag);
  const base = { ...rest, tenant: rest.tenant ?? defaultTenant, tag };
  const jobs: Job[] = [];
  let afterId = q.cursor === undefined ? undefined : decodeTagCursor(q.cursor);
  for (;;) {
    const left = q.limit - jobs.length;
    const page = await store.jobsListByTag({
      ...base,
      ...(afterId === undefined ? {} : { afterId }),
      limit: Math.max(left, TAG_READ_CHUNK),
    });
    jobs.push(...page.jobs.slice(0, left));
    if (jobs.length >= q.limit) {
      const more = page.jobs.length > left || page.next !== null;
      return { jobs, nextCursor: more ? encodeTagCursor(jobs[jobs.length - 1]!.id) : null };
    }
    if (page.next === null) return { jobs, nextCursor: null };
    afterId = page.next;
  }
}
