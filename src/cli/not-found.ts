import { out, outJson } from "./context.js";
import { EXIT } from "./errors.js";

/**
 * A record a command names by id is not there (a series, a pause): the backends throw it, and
 * `whenFound` turns it into exit 3, as for a job.
 */
export class RecordNotFound extends Error {
  constructor(
    kind: string,
    readonly id: string,
  ) {
    super(`not-found: no ${kind} ${id}`);
  }
}

/** Runs a command on one record; one that is not there prints not-found and exits 3. */
export async function whenFound(
  o: { json?: boolean | string | undefined },
  id: string,
  run: () => Promise<number>,
): Promise<number> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof RecordNotFound)) throw err;
    if (o.json) outJson({ outcome: "not-found", id });
    else out(err.message);
    return EXIT.notFound;
  }
}
