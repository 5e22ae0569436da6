import { Described, InvalidJobError } from "./errors.js";
import { NO_TAGS } from "./job.js";
import { prefixText, requireString, type FieldPrefix, type StringRule } from "./validate.js";

/**
 * Job tags (`user:42`, `campaign:spring`): labels a job is found and acted on by, through a
 * tag index per (tenant, tag) in each store. The one validator of them, used by the
 * schedule validator (library, HTTP, MCP, CLI) and by each store's insert, so a list that
 * skipped the first is still refused before anything is written.
 */

/** Most tags on one job. */
export const MAX_TAGS = 16;
/** Longest tag, in characters (UTF-16 code units, as everywhere in the validators). */
export const MAX_TAG_LENGTH = 64;

/**
 * Printable and without spaces: no control, format, private-use, unassigned or lone
 * surrogate code point (Unicode category C) and no separator (category Z). A tag is matched
 * byte for byte, so characters that print as nothing or as a space would make two tags that
 * look the same and match differently.
 */
export const TAG_RULE: StringRule = {
  max: MAX_TAG_LENGTH,
  pattern: /^[^\p{C}\p{Z}]+$/u,
  patternText: "printable characters without spaces (letters, digits, punctuation, symbols)",
};

/**
 * Checks a job's `tags`: absent (undefined or null: no tags) or an array of at most
 * MAX_TAGS distinct tags, each 1 to MAX_TAG_LENGTH printable characters without spaces.
 * Errors name `tags` or `tags[i]` with what was expected and received. Returns the tags
 * (undefined when there are none).
 */
export function optionalTags(
  value: unknown,
  prefix: FieldPrefix = "",
): readonly string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    throw new InvalidJobError(prefixText(prefix) + "tags", "an array of tags", value);
  }
  if (value.length > MAX_TAGS) {
    throw new InvalidJobError(
      prefixText(prefix) + "tags",
      `at most ${MAX_TAGS} tags`,
      new Described(`${value.length} tags`),
    );
  }
  for (let i = 0; i < value.length; i++) {
    requireString(value[i], `tags[${i}]`, TAG_RULE, prefix);
    if (value.indexOf(value[i]) !== i) {
      throw new InvalidJobError(
        `${prefixText(prefix)}tags[${i}]`,
        "a tag not given before in the list",
        value[i],
      );
    }
  }
  return value.length === 0 ? undefined : Object.freeze([...(value as string[])]);
}

/**
 * The store's check of a batch about to be written (see the module comment): every job's
 * tags as optionalTags wants them, errors naming `jobs[i].tags[k]`. Throws before any write.
 */
export function checkJobTags(jobs: readonly { readonly tags?: readonly string[] }[]): void {
  for (let i = 0; i < jobs.length; i++) {
    const tags = jobs[i]!.tags;
    if (tags !== undefined) optionalTags(tags, () => `jobs[${i}].`);
  }
}

/** Tags as stored on a job row: a JSON array, or null when there are none. */
export function tagsColumn(tags: readonly string[] | undefined): string | null {
  return tags === undefined || tags.length === 0 ? null : JSON.stringify(tags);
}

/** A job row's tags column back to the list (empty when null). */
export function tagsFromColumn(text: string | null): readonly string[] {
  return text === null ? NO_TAGS : (JSON.parse(text) as string[]);
}
