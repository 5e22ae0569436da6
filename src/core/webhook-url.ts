import { Described, InvalidJobError } from "./errors.js";
import { requireString, TARGET_RULE } from "./validate.js";

/**
 * The shape of a webhook URL, without the address policy: an http(s) URL without
 * credentials that can be sent exactly as stored. webhook-target.ts adds the private-address
 * rule (which needs the address ranges, so this module stays light for the library's schedule
 * validator, which checks callback URLs with it).
 */
export function checkWebhookUrl(value: unknown, field: string): { text: string; url: URL } {
  const text = requireString(value, field, TARGET_RULE);
  const expected = "an http(s) URL such as https://example.com/hook";
  const bad = firstUnsendable(text);
  if (bad !== -1) {
    throw new InvalidJobError(
      field,
      `${expected}, without spaces or control characters`,
      new Described(
        `${JSON.stringify(text.slice(0, 200))} (${codePoint(text, bad)} at index ${bad})`,
      ),
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidJobError(field, expected, text);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidJobError(field, expected, text);
  }
  if (url.username !== "" || url.password !== "") {
    throw new InvalidJobError(field, "a URL without user:password (use headers)", text);
  }
  return { text, url };
}

/**
 * Index of the first control character (C0, DEL, C1) or whitespace in a target, or -1: the
 * URL parser strips tabs and line breaks and trims or re-encodes the rest, so what would be
 * sent differs from what is stored.
 */
function firstUnsendable(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || (c >= 0x7f && c <= 0x9f) || text[i]!.trim() === "") return i;
  }
  return -1;
}

/** "U+000A": a character named by its code point (control characters do not print). */
function codePoint(text: string, index: number): string {
  return `U+${text.charCodeAt(index).toString(16).toUpperCase().padStart(4, "0")}`;
}
