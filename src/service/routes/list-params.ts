import { MAX_CURSOR, type ListQuery } from "../../api/list-query.js";
import { JOB_STATUSES } from "../../core/job.js";
import { readQuery } from "../../core/query-params.js";

/**
 * Query-string parameters of GET /v1/jobs, read by the shared query rules: `status`
 * repeated or comma-separated, numbers from their text, every text bounded. The library's
 * parseListQuery checks the rest; `tenant` is refused here (unknown parameter) because it
 * always comes from the API key.
 */
const LIST_QUERY = {
  status: { kind: "list", of: JOB_STATUSES },
  dueFrom: { kind: "time" },
  dueTo: { kind: "time" },
  cursor: { kind: "text", max: MAX_CURSOR },
  limit: { kind: "int", min: 1, max: 1000 },
  timeZone: { kind: "zone" },
} as const;

export function listQueryFrom(raw: unknown): ListQuery {
  return readQuery(raw, LIST_QUERY);
}
