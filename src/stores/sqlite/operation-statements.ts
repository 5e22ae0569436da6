/**
 * The SQLite statements of bulk operation records (see operations.ts), merged into
 * statements.ts's SQL. A record is one row of `operations` (primary key id, a ULID: rows
 * append in creation order).
 */
import { OPERATION_COLUMNS } from "../../store/operation-row.js";

const COLUMNS = OPERATION_COLUMNS.join(", ");
const PLACEHOLDERS = OPERATION_COLUMNS.map((c) => `@${c}`).join(", ");
const ASSIGN = OPERATION_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = @${c}`)
  .join(", ");

export const OPERATION_SQL = {
  operationInsert: `INSERT INTO operations (${COLUMNS}) VALUES (${PLACEHOLDERS})`,
  /** Primary key. */
  operationById: `SELECT ${COLUMNS} FROM operations WHERE id = ?`,
  /** Writes every column of a record read in the same transaction (primary key). */
  operationWrite: `UPDATE operations SET ${ASSIGN} WHERE id = @id`,
  /**
   * Newest first before @before: the primary key backwards, or operations_tenant with a
   * tenant; states (a JSON array, or NULL for all) are checked per row.
   */
  operationsPage: `SELECT ${COLUMNS} FROM operations
    WHERE id < @before AND (@tenant IS NULL OR tenant = @tenant)
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
    ORDER BY id DESC LIMIT @limit`,
};
