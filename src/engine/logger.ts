import pino from "pino";

/** The logging surface the engine uses: pino's, so a pino logger can be passed as is. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Default logger: pino to stderr at `level` (warn unless DUETIME_LOG_LEVEL says otherwise). */
export function defaultLogger(level = process.env.DUETIME_LOG_LEVEL ?? "warn"): Logger {
  return pino({ name: "duetime", level }, pino.destination(2));
}
