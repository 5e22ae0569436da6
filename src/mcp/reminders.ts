import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Scheduler } from "../api/scheduler.js";
import type { Job } from "../core/job.js";
import { isoInstant } from "../core/instant-text.js";

/**
 * Target of a task created without a webhook: a reminder. Nothing leaves the process when it
 * fires; the handler records it, so the job ends `succeeded` with its fired time and
 * task.status (or a notification, over stdio) is how the assistant learns it came due.
 */
export const REMINDER_TARGET = "mcp.reminder";

/**
 * Registers the handlers of MCP targets on a scheduler that fires jobs. Every process that
 * fires a database holding MCP tasks calls it: `duetime mcp` and `duetime serve`.
 */
export function registerMcpTargets(scheduler: Scheduler): void {
  scheduler.handle(REMINDER_TARGET, (job: Job) => ({
    reminded: true,
    description: describe(job),
  }));
}

/**
 * Forwards fired reminders of `tenant` to the connected client as a logging notification
 * (`notifications/message`, level notice), so a client that shows them can tell the user.
 * Only meaningful on a long-lived connection (stdio). Returns the unsubscribe.
 */
export function forwardFiredReminders(
  server: McpServer,
  scheduler: Scheduler,
  tenant: string,
): () => void {
  const onFired = ({ job }: { job: Job }): void => {
    if (job.target !== REMINDER_TARGET || job.tenant !== tenant || !server.isConnected()) return;
    server.server
      .sendLoggingMessage({
        level: "notice",
        logger: "duetime",
        data: {
          event: "reminder",
          id: job.id,
          description: describe(job),
          scheduled_at: isoInstant(job.dueAt),
        },
      })
      // The client may be gone; the outcome is stored either way.
      .catch(() => undefined);
  };
  scheduler.on("succeeded", onFired);
  return () => {
    scheduler.off("succeeded", onFired);
  };
}

function describe(job: Job): string | null {
  const p = job.payload;
  if (typeof p === "object" && p !== null && !Array.isArray(p) && typeof p.description === "string")
    return p.description;
  return null;
}
