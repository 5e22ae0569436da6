/**
 * Puts methods written beside their modules (series.ts, operations.ts, pauses.ts,
 * by-key.ts) on the Scheduler's prototype as its class body would: writable, configurable
 * and not enumerable. Each table is typed by the interface the Scheduler declares it
 * extends, so a method named there and missing here does not compile.
 */
export function installMethods(proto: object, ...tables: readonly object[]): void {
  for (const table of tables) {
    for (const [name, value] of Object.entries(table)) {
      Object.defineProperty(proto, name, {
        value: value as unknown,
        writable: true,
        configurable: true,
        enumerable: false,
      });
    }
  }
}
