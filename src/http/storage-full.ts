import { Described, storageFullIn } from "../core/errors.js";

/** Retry-After of a write refused for lack of space, in s: freeing space takes a person. */
export const STORAGE_FULL_RETRY_AFTER_S = 30;

/** A refused write's answer: status, code, the standard fields and its headers. */
export interface StorageFullFault {
  readonly status: 507;
  readonly code: "storage-full";
  readonly field: string;
  readonly expected: string;
  readonly received: Described;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The answer to a request whose write the store refused because its storage is full (a
 * StorageFullError anywhere in the error's causes), or null for any other error: 507
 * Insufficient Storage with Retry-After, in the one error shape, saying that nothing was
 * written. Shared by the API, the dashboard's routes and (its message) the MCP tools.
 */
export function storageFullFault(err: unknown): StorageFullFault | null {
  const full = storageFullIn(err);
  if (!full) return null;
  return {
    status: 507,
    code: "storage-full",
    field: "storage",
    expected: "free space in the server's storage",
    received: new Described("a full disk"),
    message: `${full.message}; retry after ${STORAGE_FULL_RETRY_AFTER_S} s (it resumes by itself once space is freed)`,
    headers: { "retry-after": String(STORAGE_FULL_RETRY_AFTER_S) },
  };
}
