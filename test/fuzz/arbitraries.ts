import fc from "fast-check";

/**
 * Generators of hostile input shared by the HTTP, dashboard and MCP fuzz suites: strings
 * that broke parsers before (issue 10), values of every JSON type where another is expected,
 * objects with prototype keys, and well-formed values to mutate from.
 */

/** Text that has broken or could break a parser, a lookup or a store. */
export const NASTY_TEXT: readonly string[] = [
  "",
  " ",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "in 1" + " ".repeat(2000) + "x",
  "in 1,  and 2 and" + " and".repeat(500),
  "in 99999999999 weeks",
  "in 14300000 weeks",
  "9".repeat(400),
  "9999-12-31T23:59:59-23:59",
  "0000-01-01T00:00:00Z",
  "2026-02-30T25:61:61Z",
  "-1",
  "1e400",
  "NaN",
  "Infinity",
  "-0",
  "0x10",
  "tomorrow 9am",
  "in 10 minutes",
  "next friday at 17:30",
  "\u0000",
  "a\r\nX-Injected: 1",
  "\u202e\u2066evil",
  "%00%0d%0a",
  "../../etc/passwd",
  "' OR 1=1 --",
  "😀".repeat(50),
  "x".repeat(5000),
  "Europe/Paris",
  "Not/AZone",
  "UTC",
  "pending",
  "dead",
  "pending,dead",
];

export const nastyText = fc.constantFrom(...NASTY_TEXT);

/** Any string: short random, full unicode, or one of the known nasty ones. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: nastyText },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
);

/** Numbers that are not what a field wants: out of range, fractional, huge, negative. */
export const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, 1.5, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, -1e308, 8.64e15 + 1),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"];

/** A key of a JSON object: usually short, sometimes a prototype key or nasty. */
export const anyKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  { weight: 1, arbitrary: nastyText },
);

/** A JSON value of random shape (objects may carry prototype keys). */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    oddNumber,
    anyText,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(anyKey, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** A value of a random JSON type (for "this field wants another type"). */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  oddNumber,
  anyText,
  fc.constant([]),
  fc.constant({}),
  fc.array(anyText, { maxLength: 3 }),
  fc.dictionary(anyKey, anyText, { maxKeys: 3 }),
);

/** Mutates a well-formed object: one field replaced, removed, or an unknown one added. */
export function mutate(
  valid: fc.Arbitrary<Record<string, unknown>>,
  fields: readonly string[],
): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    { weight: 2, arbitrary: valid },
    {
      weight: 4,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...fields), fc.oneof(wrongType, anyJson))
        .map(([v, f, x]) => ({ ...v, [f]: x })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...fields))
        .map(([v, f]) => Object.fromEntries(Object.entries(v).filter(([k]) => k !== f))),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, anyKey, anyJson).map(([v, k, x]) => {
        // defineProperty: an assignment to "__proto__" would set the prototype, not a key
        const copy = { ...v };
        Object.defineProperty(copy, k, {
          value: x,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        return copy;
      }),
    },
  );
}

/** A due time in every accepted and refused form, relative to `now`. */
export function dueTime(now: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 60_000, max: 30 * 86_400_000 }).map((d) => now + d) },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 60_000, max: 30 * 86_400_000 })
        .map((d) => new Date(now + d).toISOString()),
    },
    { weight: 1, arbitrary: fc.constantFrom("in 10 minutes", "in 2h 30m", "tomorrow 9am") },
    { weight: 2, arbitrary: anyText },
    { weight: 1, arbitrary: oddNumber },
  );
}
