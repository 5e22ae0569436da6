import { createRequire } from "node:module";
// English is always loaded; it is the only parser a start pays for (the package root loads
// every locale: 82 ms against 23 ms a start).
import * as english from "chrono-node/en";
import { InvalidJobError } from "./errors.js";

/** The part of a chrono-node locale module this reads. */
export interface TimeTextParser {
  parse: typeof english.parse;
}

/** chrono-node's module for each accepted language tag (lower case). */
const MODULES: ReadonlyMap<string, string> = new Map([
  ["de", "chrono-node/de"],
  ["en", "chrono-node/en"],
  ["es", "chrono-node/es"],
  ["fi", "chrono-node/fi"],
  ["fr", "chrono-node/fr"],
  ["it", "chrono-node/it"],
  ["ja", "chrono-node/ja"],
  ["nl", "chrono-node/nl"],
  ["pt", "chrono-node/pt"],
  ["ru", "chrono-node/ru"],
  ["sv", "chrono-node/sv"],
  ["uk", "chrono-node/uk"],
  ["vi", "chrono-node/vi"],
  // Chinese: both scripts, or one named by its script or a region that writes it
  ["zh", "chrono-node/zh"],
  ["zh-hant", "chrono-node/zh/hant"],
  ["zh-tw", "chrono-node/zh/hant"],
  ["zh-hk", "chrono-node/zh/hant"],
  ["zh-mo", "chrono-node/zh/hant"],
  ["zh-hans", "chrono-node/zh/hans"],
  ["zh-cn", "chrono-node/zh/hans"],
  ["zh-sg", "chrono-node/zh/hans"],
]);

/** The languages `locale` accepts, as written in errors and docs. */
export const LOCALES_TEXT =
  "a language tag duetime reads: de, en, es, fi, fr, it, ja, nl, pt, ru, sv, uk, vi, zh, zh-Hans or zh-Hant (a region such as fr-CA or zh-TW is read as its language)";

/** Longest `locale` read ("zh-Hant-TW" is 10). */
export const MAX_LOCALE = 35;

const loaded = new Map<string, TimeTextParser>([["chrono-node/en", english]]);
// chrono-node's CommonJS build, so that a locale loads synchronously, on first use only
const requireModule = createRequire(import.meta.url);

/** The module name for `locale`, or undefined when duetime has no parser for it. */
function moduleFor(locale: string): string | undefined {
  const tag = locale.toLowerCase().replaceAll("_", "-");
  const exact = MODULES.get(tag);
  if (exact !== undefined) return exact;
  const [language, second, third] = tag.split("-");
  if (language === "zh") {
    // zh-Hant-TW: the script decides; zh-TW: the region does
    return MODULES.get(`zh-${second}`) ?? MODULES.get(`zh-${third}`) ?? MODULES.get("zh");
  }
  return language === undefined ? undefined : MODULES.get(language);
}

/** Whether `locale` names a language duetime reads (field checks use this, loading nothing). */
export function assertLocale(locale: unknown, field: string): asserts locale is string {
  if (typeof locale !== "string" || locale.length > MAX_LOCALE || moduleFor(locale) === undefined) {
    throw new InvalidJobError(field, LOCALES_TEXT, locale);
  }
}

/** The natural-language parser for `locale` (English when undefined), loaded on first use. */
export function timeTextParser(locale: string | undefined, field = "locale"): TimeTextParser {
  if (locale === undefined) return english;
  assertLocale(locale, field);
  const name = moduleFor(locale)!;
  let parser = loaded.get(name);
  if (parser === undefined) {
    parser = requireModule(name) as TimeTextParser;
    loaded.set(name, parser);
  }
  return parser;
}
