import pino from "pino";
import type { Logger } from "../core/logger.js";

export type { Logger } from "../core/logger.js";

/** Default logger: pino to stderr at `level` (warn unless DUETIME_LOG_LEVEL says otherwise). */
export function defaultLogger(level = process.env.DUETIME_LOG_LEVEL ?? "warn"): Logger {
  return pino({ name: "duetime", level }, pino.destination(2));
}
