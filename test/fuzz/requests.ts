import fc from "fast-check";
import { ON_RESUME_POLICIES, PAUSE_FIELDS, PAUSE_SCOPE_FIELDS } from "../../src/core/pause.js";
import { HTTP_JOB_FIELDS } from "../../src/service/job-input.js";
import { HTTP_PREVIEW_FIELDS } from "../../src/service/routes/schedules.js";
import {
  HTTP_SCHEDULE_FIELDS,
  HTTP_SCHEDULE_PATCH_FIELDS,
} from "../../src/service/schedule-input.js";
import {
  anyJson,
  anyKey,
  anyText,
  dueTime,
  mutate,
  nastyText,
  oddNumber,
  wrongType,
} from "./arbitraries.js";
import { skippedAsKnownGap } from "./known-gaps.js";
import {
  answerProblem,
  describeRequest,
  send,
  snapshot,
  type FuzzService,
  type RawAnswer,
  type RawRequest,
} from "./fuzz-service.js";

/** One route of the surface under test: a path template (OpenAPI style) and its methods. */
export interface RouteSpec {
  readonly path: string;
  readonly methods: readonly string[];
  /** Query parameter names the route knows (the generators also send unknown ones). */
  readonly params?: readonly string[];
  /** Body generator for its POSTs; default: no body or a random one. */
  readonly body?: fc.Arbitrary<unknown>;
}

/** A request before it is bound to the service's state (ids known at send time). */
export interface RequestPlan {
  readonly method: string;
  readonly route: RouteSpec;
  /** Index into the known ids, or a literal id text. */
  readonly id: { known: number } | { text: string; encode: boolean };
  readonly query: readonly (readonly [string, string])[];
  readonly encodeQuery: boolean;
  readonly auth: "acme" | "umbrella" | "none" | "bogus" | "malformed" | "query";
  readonly contentType: string | null;
  readonly body:
    { kind: "none" } | { kind: "json"; value: unknown } | { kind: "raw"; text: string };
  readonly extraHeaders: Record<string, string>;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=UTF-8",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "text/plain",
  "text/plain; charset=utf-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "application/jsonx",
  "application/merge-patch+json",
  "*/*",
  "",
  ";;;",
];

/** A webhook job the service accepts (loopback targets are allowed in tests). */
export function validJob(t: FuzzService): fc.Arbitrary<Record<string, unknown>> {
  const now = t.clock.now();
  return fc.record(
    {
      target: fc.constantFrom(t.receiver.url, `${t.receiver.url}?a=1`, "https://example.com/hook"),
      dueAt: dueTime(now),
      payload: anyJson,
      key: fc.string({ minLength: 1, maxLength: 20 }),
      maxAttempts: fc.integer({ min: 1, max: 5 }),
      expireAfterMs: fc.integer({ min: 0, max: 86_400_000 }),
      timeZone: fc.constantFrom("UTC", "Europe/Paris", "America/New_York"),
      headers: fc.constantFrom({ "x-tenant-ref": "42" }, { "X-Trace": "abc" }),
      callbacks: fc.constantFrom(
        { onSuccess: "https://example.com/done" },
        { onFailure: "https://example.com/failed", onDead: "https://example.com/dead" },
      ),
    },
    { requiredKeys: ["target", "dueAt"] },
  );
}

/** The fields the API reads of a job (its own list, so a new field is fuzzed too), and `tenant`, refused. */
export const JOB_FIELDS = [...HTTP_JOB_FIELDS, "tenant"];

/** Rules the service accepts, and ones it refuses (never matching, malformed). */
const RULES = fc.oneof(
  fc.record({ cron: fc.constantFrom("0 9 * * 1-5", "*/15 * * * *", "0 0 29 2 *", "30 2 * * *") }),
  fc.record({
    rrule: fc.constantFrom("FREQ=WEEKLY;BYDAY=MO;BYHOUR=9", "FREQ=MONTHLY;BYMONTHDAY=-1"),
  }),
  fc.record({ cron: fc.constantFrom("0 0 30 2 *", "61 * * * *", "* * *", "") }),
);

/** The fields of a series that are not its rule: each mutated on its own by `mutate`. */
function seriesExtras(t: FuzzService) {
  return {
    target: fc.constantFrom(t.receiver.url, "https://example.com/hook"),
    timeZone: fc.constantFrom("UTC", "Europe/Paris", "Australia/Lord_Howe", "Asia/Kathmandu"),
    payload: anyJson,
    headers: fc.constantFrom({ "x-tenant-ref": "42" }, null),
    count: fc.integer({ min: 1, max: 10 }),
    start: dueTime(t.clock.now()),
    misfire: fc.constantFrom("fire-once", "fire-all", "skip"),
    gap: fc.constantFrom("shift", "skip"),
    overlap: fc.constantFrom("first", "both"),
  };
}

/** A create body of POST /v1/schedules: a rule and a template, mutated by the API's field list. */
export function scheduleBody(t: FuzzService): fc.Arbitrary<unknown> {
  const valid = fc
    .tuple(
      RULES,
      fc.record(
        { ...seriesExtras(t), key: fc.string({ minLength: 1, maxLength: 20 }) },
        { requiredKeys: ["target"] },
      ),
    )
    .map(([rule, rest]) => ({ ...rule, ...rest }));
  return mutate(valid, [...HTTP_SCHEDULE_FIELDS, "tenant"]);
}

/** A PATCH body: any few fields of a series, mutated by the API's patch field list. */
export function schedulePatchBody(t: FuzzService): fc.Arbitrary<unknown> {
  const valid = fc
    .tuple(fc.option(RULES, { nil: undefined }), fc.record(seriesExtras(t), { requiredKeys: [] }))
    .map(([rule, rest]) => ({ ...rule, ...rest }));
  return fc.oneof(mutate(valid, [...HTTP_SCHEDULE_PATCH_FIELDS, "key"]), anyJson);
}

/** A preview body: a rule, a zone, a window. */
export function previewBody(t: FuzzService): fc.Arbitrary<unknown> {
  const valid = fc
    .tuple(
      RULES,
      fc.record(
        {
          timeZone: seriesExtras(t).timeZone,
          from: dueTime(t.clock.now()),
          count: fc.integer({ min: 1, max: 100 }),
        },
        { requiredKeys: [] },
      ),
    )
    .map(([rule, rest]) => ({ ...rule, ...rest }));
  return mutate(valid, [...HTTP_PREVIEW_FIELDS]);
}

/**
 * A body of POST /v1/pauses: a scope of each kind and a policy, mutated by the API's field
 * lists (the request's and the scope's), so a field added to either is fuzzed too.
 */
export function pauseBody(t: FuzzService): fc.Arbitrary<unknown> {
  const scope = mutate(
    fc.oneof(
      fc.constant({ tenant: true }),
      fc.record({
        target: fc.constantFrom(t.receiver.url, new URL(t.receiver.url).origin, "mail"),
      }),
      fc.record({ tag: fc.constantFrom("user:42", "campaign:spring") }),
    ),
    PAUSE_SCOPE_FIELDS,
  );
  const valid = fc.record(
    { scope, onResume: fc.constantFrom(...ON_RESUME_POLICIES) },
    { requiredKeys: ["scope"] },
  );
  return mutate(valid, [...PAUSE_FIELDS, "tenant"]);
}

/** A reschedule body: a due time, a delay, or junk. */
export function rescheduleBody(t: FuzzService): fc.Arbitrary<unknown> {
  const now = t.clock.now();
  return fc.oneof(
    mutate(fc.record({ dueAt: dueTime(now) }), ["dueAt", "delayMs", "timeZone"]),
    mutate(fc.record({ delayMs: fc.oneof(fc.integer({ min: 0, max: 86_400_000 }), oddNumber) }), [
      "delayMs",
      "dueAt",
    ]),
    anyJson,
  );
}

/** A batch body: mostly arrays of (mutated) jobs. */
export function batchBody(t: FuzzService): fc.Arbitrary<unknown> {
  const job = mutate(validJob(t), JOB_FIELDS);
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ jobs: fc.array(job, { maxLength: 5 }) }) },
    { weight: 1, arbitrary: fc.record({ jobs: wrongType }) },
    { weight: 1, arbitrary: anyJson },
  );
}

/** Parts of a request that do not depend on its route, built once (building is not free). */
const shared = {
  id: fc.oneof(
    { weight: 5, arbitrary: fc.nat().map((known) => ({ known })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.oneof(anyText, fc.stringMatching(/^[0-9A-Z]{26}$/)), fc.boolean())
        .map(([text, raw]) => ({ text, encode: !raw })),
    },
  ),
  encodeQuery: fc.oneof(
    { weight: 6, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  auth: fc.oneof(
    { weight: 10, arbitrary: fc.constant("acme" as const) },
    { weight: 2, arbitrary: fc.constant("umbrella" as const) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "none" as const,
        "bogus" as const,
        "malformed" as const,
        "query" as const,
      ),
    },
  ),
  contentType: fc.oneof(
    { weight: 6, arbitrary: fc.constant("application/json") },
    { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  rawBody: fc
    .oneof(
      fc.constantFrom("{", "[1,", '{"a":}', "nul", '"\\ud800"', "{}}", "\u0000"),
      nastyText,
      fc.integer({ min: 1, max: 300 }).map((kb) => `{"payload":"${"a".repeat(kb * 1024)}"}`),
    )
    .map((text) => ({ kind: "raw" as const, text })),
  queryValue: fc.oneof(
    { weight: 2, arbitrary: anyText },
    { weight: 1, arbitrary: oddNumber.map(String) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 200 }).map(String) },
  ),
  extraHeaders: fc.oneof(
    { weight: 6, arbitrary: fc.constant({}) },
    {
      weight: 1,
      arbitrary: fc.record(
        {
          "if-match": fc.oneof(
            anyText.map((s) => s.replace(/[^\x20-\x7e]/g, "")),
            fc.constant('"1"'),
          ),
          accept: fc.constantFrom("application/json", "text/html", "*/*", "text/event-stream"),
          "x-forwarded-for": fc.constantFrom("10.0.0.1", "::1", "garbage"),
        },
        { requiredKeys: [] },
      ),
    },
  ),
};

/** Requests over `routes`: the path's own methods mostly, any method sometimes. */
export function requestPlan(routes: readonly RouteSpec[]): fc.Arbitrary<RequestPlan> {
  const perRoute = routes.map((r) =>
    fc.record({
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...r.methods) },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      route: fc.constant(r),
      id: shared.id,
      query: fc.array(
        fc.tuple(
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...(r.params ?? ["limit"])) },
            { weight: 1, arbitrary: anyKey },
          ),
          shared.queryValue,
        ),
        { maxLength: 4 },
      ),
      encodeQuery: shared.encodeQuery,
      auth: shared.auth,
      contentType: shared.contentType,
      body: fc.oneof(
        {
          weight: 6,
          arbitrary: (r.body ?? anyJson).map((value) => ({ kind: "json" as const, value })),
        },
        { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
        { weight: 1, arbitrary: shared.rawBody },
      ),
      extraHeaders: shared.extraHeaders,
    }),
  );
  return fc.oneof(...perRoute).filter((p) => !skippedAsKnownGap(p));
}

/** Binds a plan to the service's state: the concrete request to send. */
export function toRequest(t: FuzzService, p: RequestPlan): RawRequest {
  const id =
    "known" in p.id
      ? t.knownIds[p.id.known % t.knownIds.length]!
      : p.id.encode
        ? encodeURIComponent(p.id.text)
        : p.id.text;
  const path = p.route.path.replace("{id}", id).replace("{name}", id);
  const enc = (s: string) => (p.encodeQuery ? encodeURIComponent(s) : s);
  const query = [...p.query];
  if (p.auth === "query") query.push(["key", t.acme.key]);
  const qs = query.map(([k, v]) => `${enc(k)}=${enc(v)}`).join("&");
  const headers: Record<string, string> = { ...p.extraHeaders };
  if (p.auth === "acme") headers.authorization = `Bearer ${t.acme.key}`;
  if (p.auth === "umbrella") headers.authorization = `Bearer ${t.umbrella.key}`;
  if (p.auth === "bogus") headers.authorization = `Bearer dt_${"x".repeat(40)}`;
  if (p.auth === "malformed") headers.authorization = "Basic Zm9vOmJhcg==";
  let body: string | undefined;
  if (p.method !== "GET" && p.method !== "HEAD") {
    if (p.body.kind === "json") body = JSON.stringify(p.body.value) ?? "null";
    if (p.body.kind === "raw") body = p.body.text;
  }
  if (body !== undefined && p.contentType !== null) headers["content-type"] = p.contentType;
  return {
    method: p.method,
    path: qs === "" ? path : `${path}?${qs}`,
    headers,
    ...(body === undefined ? {} : { body }),
  };
}

/** Tally of answers by status, for the summary. */
export type StatusTally = Map<number, number>;

/**
 * Sends one request and checks it: no 5xx, every 4xx in the error shape, and a refused
 * request (any 4xx) leaves the store's snapshot unchanged. `state.before` carries the
 * snapshot from one request to the next (nothing else changes the store meanwhile).
 */
export async function sendAndCheck(
  t: FuzzService,
  state: { before: string; tally: StatusTally },
  p: RequestPlan,
): Promise<void> {
  try {
    await sendAndCheckOnce(t, state, p);
  } catch (err) {
    if (!collecting) throw err;
    const first = (err as Error).message.split("\n");
    const key = `${p.method} ${p.route.path} ${first[first.length - 1]!.slice(0, 160)}`;
    collected.set(key, (collected.get(key) ?? 0) + 1);
    if (!examples.has(key)) examples.set(key, (err as Error).message.slice(0, 1500));
  }
}

/** FUZZ_COLLECT=1: failures are tallied (and printed by `collectedReport`), not thrown. */
const collecting = process.env.FUZZ_COLLECT === "1";
const collected = new Map<string, number>();
const examples = new Map<string, string>();

export function collectedReport(): string {
  return [...collected.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n}x ${k}\n${examples.get(k)}`)
    .join("\n\n");
}

async function sendAndCheckOnce(
  t: FuzzService,
  state: { before: string; tally: StatusTally },
  p: RequestPlan,
): Promise<void> {
  const req = toRequest(t, p);
  let answer: RawAnswer;
  try {
    answer = await send(t.svc.url, req);
  } catch (err) {
    // node:http refuses to send some bytes (unescaped path characters, bad header values):
    // a request that never left is not the server's failure.
    if ((err as NodeJS.ErrnoException).code === "ERR_UNESCAPED_CHARACTERS") return;
    if ((err as NodeJS.ErrnoException).code === "ERR_INVALID_CHAR") return;
    throw new Error(`${describeRequest(req)}\n  -> no answer: ${(err as Error).message}`);
  }
  state.tally.set(answer.status, (state.tally.get(answer.status) ?? 0) + 1);
  const problem = answerProblem(answer, req.method);
  const after = await snapshot(t);
  if (problem === null && answer.status >= 400 && after !== state.before) {
    throw new Error(
      `${describeRequest(req)}\n  -> ${answer.status} refused, but the store changed: ${answer.text.slice(0, 500)}`,
    );
  }
  state.before = after;
  if (problem !== null) {
    throw new Error(`${describeRequest(req)}\n  -> ${problem}: ${answer.text.slice(0, 500)}`);
  }
  if (answer.status === 201 || answer.status === 200) rememberIds(t, answer.text);
}

function rememberIds(t: FuzzService, text: string): void {
  if (t.knownIds.length > 200 || !text.startsWith("{")) return;
  try {
    const body = JSON.parse(text) as {
      job?: { id?: unknown };
      jobs?: { job?: { id?: unknown } }[];
      schedule?: { id?: unknown };
      pause?: { id?: unknown };
    };
    const ids = [
      body.job?.id,
      body.schedule?.id,
      body.pause?.id,
      ...(Array.isArray(body.jobs) ? body.jobs.map((j) => j.job?.id) : []),
    ];
    for (const id of ids)
      if (typeof id === "string" && !t.knownIds.includes(id)) t.knownIds.push(id);
  } catch {
    // not JSON: nothing to remember
  }
}

/** The tally as a table row per status, for the printed summary. */
export function tallyTable(name: string, tally: StatusTally, ms: number): string {
  const total = [...tally.values()].reduce((a, b) => a + b, 0);
  const rows = [...tally.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `| ${s} | ${n} |`);
  return [
    `${name}: ${total} requests in ${(ms / 1000).toFixed(1)} s (${Math.round(total / (ms / 1000))}/s), 0 invariant failures`,
    "| status | answers |",
    "|---|---|",
    ...rows,
  ].join("\n");
}
