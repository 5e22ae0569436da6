import { send, type FuzzService } from "./fuzz-service.js";
import type { RouteSpec } from "./requests.js";

interface OpenApiDoc {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
}

const HTTP_METHODS = new Set(["get", "post", "put", "patch", "delete", "head", "options"]);

/**
 * Every route of the service's own OpenAPI document (GET /openapi.json), with its methods
 * and query parameters: the fuzz suites cover what the service says it serves, so a route
 * added later is fuzzed without touching them.
 */
export async function openApiRoutes(t: FuzzService): Promise<RouteSpec[]> {
  const a = await send(t.svc.url, { method: "GET", path: "/openapi.json", headers: {} });
  if (a.status !== 200) throw new Error(`/openapi.json answered ${a.status}`);
  const doc = JSON.parse(a.text) as OpenApiDoc;
  return Object.entries(doc.paths).map(([path, ops]) => {
    const methods = Object.keys(ops).filter((m) => HTTP_METHODS.has(m));
    const params = new Set<string>();
    for (const m of methods) {
      for (const p of ops[m]?.parameters ?? []) if (p.in === "query") params.add(p.name);
    }
    return {
      path,
      methods: methods.map((m) => m.toUpperCase()),
      ...(params.size > 0 ? { params: [...params] } : {}),
    };
  });
}
