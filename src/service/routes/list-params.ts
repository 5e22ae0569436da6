import { InvalidJobError } from "../../core/errors.js";
import type { JobStatus } from "../../core/job.js";
import type { ListQuery } from "../../api/list-query.js";
import { requireObject } from "../../core/validate.js";

const LIST_PARAMS = ["status", "dueFrom", "dueTo", "cursor", "limit", "timeZone"];

/**
 * Query-string parameters of GET /v1/jobs to a ListQuery: `status` repeated or
 * comma-separated, numbers from their text. The library's parseListQuery checks the rest;
 * `tenant` is refused here because it always comes from the API key.
 */
export function listQueryFrom(raw: unknown): ListQuery {
  const q = requireObject(raw ?? {}, "query");
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(q)) {
    if (!LIST_PARAMS.includes(name)) {
      throw new InvalidJobError(
        name,
        `no such parameter (known: ${LIST_PARAMS.join(", ")})`,
        value,
      );
    }
    if (Array.isArray(value) && name !== "status") {
      throw new InvalidJobError(name, "one value", value);
    }
    out[name] = value;
  }
  if (out.status !== undefined) {
    const list = (Array.isArray(out.status) ? out.status : [out.status]) as string[];
    out.status = list.flatMap((s) => s.split(",")).map((s) => s.trim()) as JobStatus[];
  }
  if (typeof out.limit === "string" && /^\d{1,6}$/.test(out.limit)) out.limit = Number(out.limit);
  for (const f of ["dueFrom", "dueTo"]) {
    const v = out[f];
    if (typeof v === "string" && /^\d{1,16}$/.test(v)) out[f] = Number(v);
  }
  return out as ListQuery;
}
