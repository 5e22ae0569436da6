import { LIST_QUERY_PARAMS, type ListQuery } from "../../api/list-query.js";
import { readQuery } from "../../core/query-params.js";

/**
 * Query-string parameters of GET /v1/jobs, read by the listing's one set of rules
 * (LIST_QUERY_PARAMS); `tenant` is refused here (unknown parameter) because it always comes
 * from the API key.
 */
export function listQueryFrom(raw: unknown): ListQuery {
  return readQuery(raw, LIST_QUERY_PARAMS);
}
