import { InvalidJobError } from "../core/errors.js";

/** How a command names its job: by id (the argument) or by idempotency key (`--key`). */
export type JobRef = { readonly id: string } | { readonly key: string };

/** The job the command names: exactly one of an id and `--key`. */
export function jobRefOf(id: string | undefined, key: string | undefined): JobRef {
  if (key !== undefined) {
    if (id !== undefined) {
      throw new InvalidJobError("--key", "either a job id or --key, not both", key);
    }
    return { key };
  }
  if (id === undefined) throw new InvalidJobError("id", "a job id (or --key <key>)", id);
  return { id };
}

/** "job 01J..." or 'the live job with key "k"', for messages. */
export function refText(ref: JobRef): string {
  return "key" in ref ? `the live job with key ${JSON.stringify(ref.key)}` : `job ${ref.id}`;
}

/** The not-found line of a command. */
export function notFoundText(ref: JobRef): string {
  return "key" in ref
    ? `not-found: no live job with key ${JSON.stringify(ref.key)}`
    : `not-found: no job ${ref.id}`;
}
