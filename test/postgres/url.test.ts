import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/core/errors.js";
import { parsePostgresUrl } from "../../src/stores/postgres/url.js";

describe("postgres connection strings", () => {
  it("takes several hosts apart as libpq does, ports defaulting to 5432", () => {
    const loc = parsePostgresUrl(
      "postgres://app:s%40cret@db1:5432,db2,[::1]:5434/jobs?target_session_attrs=read-write&schema=prod&sslmode=require",
    );
    expect(loc.hosts).toEqual([
      { host: "db1", port: 5432 },
      { host: "db2", port: 5432 },
      { host: "::1", port: 5434 },
    ]);
    expect(loc.targetSessionAttrs).toBe("read-write");
    expect(loc.schema).toBe("prod");
    // node-postgres gets one host at a time, its own parameters kept and duetime's removed.
    expect(loc.connectionString(loc.hosts[2]!)).toBe(
      "postgres://app:s%40cret@[::1]:5434/jobs?sslmode=require",
    );
    expect(loc.display).toBe("db1:5432,db2:5432,[::1]:5434/jobs");
  });

  it("reads the pooler and session hosts, and connect_timeout in seconds", () => {
    const loc = parsePostgresUrl(
      "postgresql://u@bouncer:6432/db?pooler=transaction&session_hosts=db1:5432,db2:5433&connect_timeout=3",
    );
    expect(loc.pooler).toBe("transaction");
    expect(loc.sessionHosts).toEqual([
      { host: "db1", port: 5432 },
      { host: "db2", port: 5433 },
    ]);
    expect(loc.connectTimeoutMs).toBe(3000);
    expect(loc.targetSessionAttrs).toBe("any");
    expect(loc.connectionString(loc.hosts[0]!)).toBe(
      "postgresql://u@bouncer:6432/db?connect_timeout=3",
    );
  });

  it("refuses what it cannot serve with the field, the expectation and what it got (no password)", () => {
    const bad = (url: string) => {
      try {
        parsePostgresUrl(url);
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidOptionError);
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(bad("postgres://u:pw@h1/db?target_session_attrs=standby")).toBe(
      'option url target_session_attrs: expected "any", "read-write" or "primary" (a scheduler writes: a standby cannot serve it), received "standby"',
    );
    expect(bad("postgres://u:pw@h1:99999/db")).toMatch(
      /^option url: expected hosts as host\[:port\].*received "h1:99999"$/,
    );
    expect(bad("postgres://u:pw@h1/db?pooler=session")).toMatch(/pooler: expected "transaction"/);
    expect(bad("mysql://u:pw@h1/db")).toBe(
      'option url: expected a postgres:// or postgresql:// URL, received "mysql://***@h1/db"',
    );
  });
});
