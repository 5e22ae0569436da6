import { InvalidOptionError } from "../../core/errors.js";

/** One host of a connection string. */
export interface PostgresHost {
  readonly host: string;
  readonly port: number;
}

/**
 * A PostgreSQL connection string taken apart: libpq's form, with several hosts allowed
 * (`postgres://user:pw@h1:5432,h2:5433/db?target_session_attrs=read-write`), which
 * node-postgres and the WHATWG URL parser both refuse. duetime's own parameters are taken
 * out; `connectionString` is what node-postgres is given for each host.
 */
export interface PostgresLocation {
  /** Hosts in the order given; node-postgres connects to one at a time. */
  readonly hosts: readonly PostgresHost[];
  /**
   * libpq's `target_session_attrs`: "any" (default) takes the first host that accepts a
   * connection, "read-write" (or "primary") the first that accepts writes.
   */
  readonly targetSessionAttrs: "any" | "read-write";
  /** libpq's `connect_timeout` in ms (the parameter is in seconds); null when not given. */
  readonly connectTimeoutMs: number | null;
  /** `?schema=` (duetime's schema), null when not given. */
  readonly schema: string | null;
  /**
   * `?pooler=transaction`: the hosts are a pooler in transaction mode (pgbouncer), so no
   * session state may be relied on: no startup options, and LISTEN goes to `sessionHosts`.
   */
  readonly pooler: "transaction" | null;
  /**
   * `?session_hosts=h1:5432,h2:5433`: where the session connection (LISTEN) goes when the
   * hosts are a pooler; same user, password, database and parameters. Null: the hosts.
   */
  readonly sessionHosts: readonly PostgresHost[] | null;
  /**
   * The connection string for one host, without duetime's parameters (for node-postgres);
   * null keeps the string's own empty host list (a `host=` parameter or PGHOST decides).
   */
  connectionString(host: PostgresHost | null): string;
  /** `host:port,host:port/db#schema`: where it points, without user, password or options. */
  readonly display: string;
}

/** duetime's own parameters, and libpq's that node-postgres does not know. */
const OWN_PARAMS = ["schema", "target_session_attrs", "pooler", "session_hosts"];

/**
 * Parses a connection string; `field` names it in errors (which never repeat a password).
 * Hosts without a port get 5432 (libpq's default); a host list may be empty only when
 * `host=` is given as a parameter, which is left to node-postgres (one host).
 */
export function parsePostgresUrl(url: string, field = "url"): PostgresLocation {
  const scheme = typeof url === "string" ? /^postgres(?:ql)?:\/\//i.exec(url)?.[0] : undefined;
  if (scheme === undefined) {
    throw new InvalidOptionError(field, "a postgres:// or postgresql:// URL", redact(url));
  }
  // scheme://authority/path?query#fragment, split by hand: the authority may hold commas.
  const hash = url.indexOf("#");
  const rest = url.slice(scheme.length, hash < 0 ? undefined : hash);
  const authorityEnd = rest.search(/[/?]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const afterAuthority = authorityEnd < 0 ? "" : rest.slice(authorityEnd);
  const q = afterAuthority.indexOf("?");
  const path = q < 0 ? afterAuthority : afterAuthority.slice(0, q);
  const query = q < 0 ? "" : afterAuthority.slice(q);
  const at = authority.lastIndexOf("@");
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : "";
  const hostList = authority.slice(at + 1);
  const hosts = hostList === "" ? [] : parseHosts(hostList, field);
  const params = new URLSearchParams(query.slice(1));
  const schema = params.get("schema");
  const tsa = params.get("target_session_attrs") ?? "any";
  if (tsa !== "any" && tsa !== "read-write" && tsa !== "primary") {
    throw new InvalidOptionError(
      `${field} target_session_attrs`,
      '"any", "read-write" or "primary" (a scheduler writes: a standby cannot serve it)',
      tsa,
    );
  }
  const pooler = params.get("pooler");
  if (pooler !== null && pooler !== "transaction") {
    throw new InvalidOptionError(`${field} pooler`, '"transaction"', pooler);
  }
  const sessionHostList = params.get("session_hosts");
  const timeout = params.get("connect_timeout");
  const timeoutS = timeout === null ? null : Number(timeout);
  if (timeoutS !== null && (!Number.isInteger(timeoutS) || timeoutS < 0)) {
    throw new InvalidOptionError(`${field} connect_timeout`, "whole seconds (0: none)", timeout);
  }
  for (const p of OWN_PARAMS) params.delete(p);
  const kept = params.toString();
  const tail = `${path}${kept === "" ? "" : `?${kept}`}`;
  return Object.freeze({
    hosts,
    targetSessionAttrs: tsa === "any" ? "any" : "read-write",
    connectTimeoutMs: timeoutS === null || timeoutS === 0 ? null : timeoutS * 1000,
    schema,
    pooler,
    sessionHosts:
      sessionHostList === null ? null : parseHosts(sessionHostList, `${field} session_hosts`),
    connectionString: (h: PostgresHost | null) =>
      `${scheme}${userinfo}${h === null ? "" : hostPort(h)}${tail}`,
    display: `${hosts.map(hostPort).join(",")}${path}`,
  });
}

function parseHosts(list: string, field: string): PostgresHost[] {
  return list.split(",").map((entry) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
    const port = m?.[2] === undefined ? 5432 : Number(m[2]);
    if (!m?.[1] || port < 1 || port > 65535) {
      throw new InvalidOptionError(field, "hosts as host[:port], separated by commas", entry);
    }
    const host = m[1].startsWith("[") ? m[1].slice(1, -1) : decodeURIComponent(m[1]);
    return { host, port };
  });
}

function hostPort(h: PostgresHost): string {
  return `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`;
}

/** The string without its userinfo, for error messages. */
function redact(url: unknown): unknown {
  return typeof url === "string" ? url.replace(/\/\/[^/?#]*@/, "//***@") : url;
}
