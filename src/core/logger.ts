/**
 * The logging surface the engine and the stores' background loops use: pino's, so a pino
 * logger can be passed as is. It lives in core because both sides of the store interface
 * log through it (src/engine/logger.ts makes the default one).
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Logs nothing: the default of the stores' loops when used on their own. */
export const quietLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
