import { mkdirSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildFrontEnd, HOUR, secondNode, startDashboard, type Dashboard } from "./helpers.js";

// Browser globals used inside page.evaluate callbacks, which run in Chromium, not in Node.
declare const document: {
  activeElement: { textContent: string | null } | null;
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const sessionStorage: { getItem(key: string): string | null };

const ARTIFACTS = new URL("../../test-artifacts/dashboard/", import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * End to end in headless Chromium: the built page against a real server with seeded jobs.
 * Screenshots go to test-artifacts/dashboard/.
 */
describe("dashboard in a browser", () => {
  let d: Dashboard;
  let web: Awaited<ReturnType<typeof buildFrontEnd>>;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    web = await buildFrontEnd();
    d = await startDashboard({ staticDir: web.dir, events: { pollMs: 100 } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    web?.cleanup();
  });

  /** CSP violations reported by any page of the current test; each test must end with none. */
  const violations: string[] = [];
  afterEach(() => {
    const seen = violations.splice(0);
    expect(seen).toEqual([]);
  });

  async function open(width = 1280, height = 900): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height }, colorScheme: "light" });
    const page = await context.newPage();
    page.on("pageerror", (e) => {
      throw e;
    });
    // Every violation of the served Content-Security-Policy is reported twice over: the
    // page's own securitypolicyviolation event, and Chromium's console error about it.
    await page.addInitScript({
      content: `document.addEventListener("securitypolicyviolation", (e) =>
        console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI));`,
    });
    page.on("console", (m) => {
      if (m.type() === "error" && /CSP violation|Content Security Policy/.test(m.text())) {
        violations.push(m.text());
      }
    });
    return page;
  }

  it("serves the page under the service's CSP, and the check above does see a violation", async () => {
    const res = await fetch(d.base);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const page = await open();
    await signIn(page);
    // An inline script is what the policy forbids: it must be blocked and reported.
    await page.evaluate(`{
      const s = document.createElement("script");
      s.textContent = "window.inlineRan = true";
      document.body.append(s);
    }`);
    await expect.poll(() => violations.length).toBeGreaterThan(0);
    expect(violations.join("\n")).toContain("script-src");
    expect(await page.evaluate("window.inlineRan === true")).toBe(false);
    violations.length = 0;
    await page.context().close();
  });

  /** How far the page scrolls sideways (0 when it fits its width). */
  function sideways(page: Page): Promise<number> {
    return page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
  }

  async function signIn(page: Page, key = "key-acme", hash = ""): Promise<void> {
    await page.goto(`${d.base}/${hash}`);
    await page.getByLabel("API key").fill(key);
    await page.keyboard.press("Enter");
    await page.locator("#live[data-state=live]").waitFor();
  }

  /** The future table's rows as bucket offset (hours from the current bucket) -> count. */
  async function futureTable(page: Page): Promise<Record<number, number>> {
    const rows = await page
      .locator("#future-table tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute("data-bin")!, Number(tr.getAttribute("data-pending"))]),
      );
    return Object.fromEntries(
      rows.map(([bin, n]) => [(Date.parse(bin as string) - d.bucket0) / HOUR, n as number]),
    );
  }

  it("asks for the key, refuses a wrong one, then shows the future by bucket", async () => {
    const page = await open();
    await page.goto(d.base);
    const key = page.getByLabel("API key");
    await expect
      .poll(() => key.evaluate((el) => el === (document.activeElement as unknown)))
      .toBe(true);
    await key.fill("wrong-key");
    await page.getByRole("button", { name: "Open dashboard" }).click();
    await page.getByRole("alert").filter({ hasText: "not accepted" }).waitFor();
    expect(await page.getByRole("navigation").isVisible()).toBe(false);
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(false);
    await page.screenshot({ path: `${ARTIFACTS}login-refused.png` });

    await page.getByLabel("API key").fill("key-acme");
    await page.keyboard.press("Enter");
    await page.locator("#future-table").waitFor({ state: "attached" });
    expect(await futureTable(page)).toEqual({ 1: 3, 3: 5, 5: 2 });
    expect(await page.locator("#future-total").textContent()).toBe("10");
    expect(await page.locator("#future-overdue").textContent()).toBe("1");
    const label = await page.locator("#future-chart").getAttribute("aria-label");
    expect(label).toContain("10 pending jobs");
    expect(await page.locator("#future-chart canvas").count()).toBe(1);
    await page.locator("#live[data-state=live]").waitFor();
    await page.screenshot({ path: `${ARTIFACTS}future-day.png`, fullPage: true });

    // The key lives in this tab's session storage only.
    expect(await page.evaluate(() => sessionStorage.getItem("duetime.apiKey"))).toBe("key-acme");

    await page.getByRole("link", { name: "Week" }).click();
    await expect.poll(() => page.locator("#future-total").textContent()).toBe("17");
    const week = await futureTable(page);
    expect(Object.values(week).reduce((a, b) => a + b, 0)).toBe(17);
    await page.screenshot({ path: `${ARTIFACTS}future-week.png`, fullPage: true });

    // Signing out forgets the key and hides the sections.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("duetime.apiKey"))).toBeNull();
    expect(await page.getByRole("navigation").isVisible()).toBe(false);
    await page.context().close();
  });

  it("zooms into a dragged range", async () => {
    const page = await open();
    await signIn(page, "key-acme", "#/future?zoom=1d");
    await page.locator("#future-table").waitFor({ state: "attached" });
    const over = page.locator("#future-chart .u-over");
    const box = (await over.boundingBox())!;
    // Drag across the left ~third of the day: buckets +1h..+5h are in it.
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForURL(/from=\d+&to=\d+/);
    await page.getByRole("link", { name: "Reset zoom" }).waitFor();
    await expect.poll(() => page.locator("#future-total").textContent()).toBe("10");
    await page.context().close();
  });

  it("shows now: backlog, overdue, dead today and the activity chart", async () => {
    const page = await open();
    await signIn(page, "key-acme", "#/now");
    await expect.poll(() => page.locator("#now-backlog").textContent()).toBe("18");
    expect(await page.locator("#now-dead").textContent()).toBe("1");
    expect(await page.locator("#now-overdue").textContent()).toMatch(/late/);
    expect(await page.locator("#now-chart").getAttribute("aria-label")).toContain(
      "3 jobs succeeded",
    );
    await page.screenshot({ path: `${ARTIFACTS}now.png`, fullPage: true });
    await page.context().close();
  });

  it("searches a job by key, cancels it from its page, and the change arrives live elsewhere", async () => {
    const { invoice } = d.seeded;
    // A second tab watches the pending list and the live feed.
    const watcher = await open();
    await signIn(watcher, "key-acme", "#/jobs?status=pending");
    const watchedRow = watcher.locator(`#jobs-table tr[data-id="${invoice.id}"]`);
    await watchedRow.waitFor();
    expect(await watchedRow.locator(".badge").textContent()).toBe("pending");

    const page = await open();
    await signIn(page, "key-acme", "#/jobs");
    await page.getByLabel("Job id or idempotency key").fill("invoice-42");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("Found by key.").waitFor();
    await page.screenshot({ path: `${ARTIFACTS}jobs-search.png`, fullPage: true });
    await page.getByRole("link", { name: invoice.id }).click();
    await page.locator("#job-status .badge").waitFor();
    expect(await page.locator("#job-status").textContent()).toBe("pending");
    expect(await page.locator(".payload").textContent()).toContain("ada@example.com");
    // The job's ISO times (the one JSON view) are read as instants, in due order and history.
    const iso = (t: number) => new Date(t).toISOString();
    expect(await page.locator(".details time").first().getAttribute("datetime")).toBe(
      iso(invoice.dueAt),
    );
    expect(await page.locator("#history time").first().getAttribute("datetime")).toBe(
      iso(invoice.createdAt),
    );
    expect(await watchedRow.locator(".due time").getAttribute("datetime")).toBe(iso(invoice.dueAt));
    await page.screenshot({ path: `${ARTIFACTS}job-pending.png`, fullPage: true });

    // Keyboard: open the confirmation, focus lands on "Yes, cancel it", Enter confirms.
    await page.getByRole("button", { name: "Cancel job…" }).click();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.textContent))
      .toBe("Yes, cancel it");
    await page.keyboard.press("Enter");
    await page.locator("#outcome").filter({ hasText: "Cancelled." }).waitFor();
    expect(await page.locator("#job-status").textContent()).toBe("cancelled");
    // The live feed brought the change into the history of this page...
    await page.locator("#history li").filter({ hasText: "cancelled → cancelled (live)" }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}job-cancelled.png`, fullPage: true });

    // ...and into the other tab, which did not reload.
    await watchedRow.locator('.badge[data-status="cancelled"]').waitFor();
    await watcher.screenshot({ path: `${ARTIFACTS}jobs-live-update.png`, fullPage: true });

    // Cancelling again (stale page) gives the definite too-late answer.
    const again = await d.api(`/v1/dashboard/jobs/${invoice.id}/cancel`, {
      method: "POST",
      body: {},
    });
    expect(again.status).toBe(409);
    await watcher.context().close();
    await page.context().close();
  });

  it("snoozes a pending job and retries the dead one", async () => {
    const page = await open();
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 2 * HOUR,
      target: "noop",
      key: "snooze-me",
    });
    await signIn(page, "key-acme", `#/jobs/${job.id}`);
    await page.getByLabel("Snooze to").fill("in 3 hours");
    await page.getByRole("button", { name: "Snooze", exact: true }).click();
    await page.locator("#outcome").filter({ hasText: "Snoozed" }).waitFor();
    expect((await d.scheduler.get(job.id))!.dueAt).toBe(d.clock.now() + 3 * HOUR);

    // A change made elsewhere arrives over the live stream and the page reloads the job.
    await d.scheduler.reschedule(job.id, d.bucket0 + 6 * HOUR);
    const version = String((await d.scheduler.get(job.id))!.version);
    await page
      .locator("#job-version")
      .filter({ hasText: new RegExp(`^${version}$`) })
      .waitFor();

    await page.goto(`${d.base}/#/jobs/${d.seeded.dead.id}`);
    await page.locator("#job-status .badge").waitFor();
    expect(await page.locator("#job-status").textContent()).toBe("dead");
    await page.screenshot({ path: `${ARTIFACTS}job-dead.png`, fullPage: true });
    await page.getByRole("button", { name: "Retry now" }).click();
    await page.locator("#outcome").filter({ hasText: "Retried" }).waitFor();
    expect(await page.locator("#job-status").textContent()).toBe("pending");
    await page.context().close();
  });

  it("is usable at phone width", async () => {
    const page = await open(375, 740);
    await signIn(page, "key-acme", "#/future");
    await page.locator("#future-table").waitFor({ state: "attached" });
    const overflow = () =>
      page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
    expect(await overflow()).toBeLessThanOrEqual(0);
    const chart = (await page.locator("#future-chart canvas").boundingBox())!;
    expect(chart.width).toBeLessThanOrEqual(375);
    for (const name of ["Future", "Now", "Jobs", "Schedules", "Bulk", "Pauses"]) {
      expect(await page.getByRole("link", { name, exact: true }).isVisible()).toBe(true);
    }
    await page.screenshot({ path: `${ARTIFACTS}phone-future.png`, fullPage: true });
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await page.locator("#jobs-table").waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}phone-jobs.png`, fullPage: true });
    await page.goto(`${d.base}/#/now`);
    await page.locator("#now-backlog").waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}phone-now.png`, fullPage: true });
    await page.context().close();
  });

  it("shows in the live view a job another node fired on the same store", async () => {
    const page = await open();
    await signIn(page, "key-acme", "#/now");
    const other = secondNode(d);
    try {
      other.scheduler.handle("report", () => "sent");
      const { job } = await other.scheduler.schedule({
        tenant: "acme",
        dueAt: d.clock.now() + 100,
        target: "report",
      });
      other.scheduler.start();
      await d.clock.advance(1_000);
      await other.scheduler.idle();
      expect((await d.scheduler.get(job.id))?.status).toBe("succeeded");
      // This process fired nothing and saw no event: only the durable feed brings it.
      const feed = page.locator(`#feed li[data-id="${job.id}"]`);
      await feed.filter({ hasText: "succeeded" }).waitFor();
      expect(
        await feed.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-kind"))),
      ).toEqual(["succeeded", "claimed", "scheduled"]);
      await page.screenshot({ path: `${ARTIFACTS}now-other-node.png`, fullPage: true });
    } finally {
      await other.close();
      await page.context().close();
    }
  });

  it("filters jobs by tag, then counts, confirms, follows and cancels them in bulk", async () => {
    const s = d.scheduler;
    const tagged = async (tenant: string, tag: string, hours: number) =>
      (
        await s.schedule({
          tenant,
          dueAt: d.bucket0 + hours * HOUR,
          target: "noop",
          tags: [tag, "campaign:spring"],
        })
      ).job.id;
    const user42 = [await tagged("acme", "user:42", 8), await tagged("acme", "user:42", 9)];
    user42.push(await tagged("acme", "user:42", 10));
    const user7 = await tagged("acme", "user:7", 8);
    const foreign = await tagged("globex", "user:42", 8);
    const acmeOperation = async () => (await s.listOperations({ tenant: "acme" })).operations[0]!;

    const page = await open();
    await signIn(page, "key-acme", "#/jobs");
    await page.getByRole("textbox", { name: "Tag", exact: true }).fill("user:42");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/tag=user%3A42/);
    await page.locator(`#jobs-table tr[data-id="${user42[2]}"]`).waitFor();
    const ids = () =>
      page.locator("#jobs-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.dataset.id));
    expect(await ids()).toEqual(user42);
    const chips = page.locator(`#jobs-table tr[data-id="${user42[0]}"] .chip`);
    expect(await chips.allTextContents()).toEqual(["user:42", "campaign:spring"]);
    await page.screenshot({ path: `${ARTIFACTS}jobs-by-tag.png`, fullPage: true });

    // the listing's link opens the bulk page with the tag filled in; the count comes first
    await page.locator("#bulk-link").click();
    await expect
      .poll(() => page.getByLabel("Tags (comma-separated, all of them)").inputValue())
      .toBe("user:42");
    await page.getByRole("button", { name: "Count matching jobs" }).click();
    await page
      .locator("#bulk-question")
      .filter({ hasText: "Cancel 3 jobs tagged user:42?" })
      .waitFor();
    expect(await s.listOperations({ tenant: "acme" })).toMatchObject({
      operations: [{ kind: "count", params: { of: "cancel" }, state: "done", changed: 3 }],
    });
    await page.screenshot({ path: `${ARTIFACTS}bulk-confirm.png`, fullPage: true });
    await page.getByRole("button", { name: "Yes, cancel 3 jobs" }).click();
    // the engine is not started here: the operation waits queued until the test runs it
    await page.locator("#bulk-panel[data-state=queued]").waitFor();
    expect(await page.getByRole("button", { name: "Cancel operation" }).isVisible()).toBe(true);
    const op = await acmeOperation();
    expect(op).toMatchObject({ kind: "cancel", state: "queued" });
    await s.runOperation(op.id);
    await page.locator("#bulk-panel[data-state=done]").waitFor();
    expect(await page.locator("#bulk-outcome").textContent()).toBe("Done: 3 jobs cancelled.");
    expect(await page.locator("#bulk-progress").getAttribute("value")).toBe("1");
    await page.locator(`#operations-table tr[data-id="${op.id}"][data-state=done]`).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}bulk-done.png`, fullPage: true });
    for (const id of user42) expect((await s.get(id))!.status).toBe("cancelled");
    expect((await s.get(user7))!.status).toBe("pending");
    expect((await s.get(foreign))!.status).toBe("pending");

    // a started operation stops with its Cancel button: no batch runs after it
    await page.getByLabel("Tags (comma-separated, all of them)").fill("user:7");
    await page.getByRole("button", { name: "Count matching jobs" }).click();
    await page.getByRole("button", { name: "Yes, cancel 1 job" }).click();
    await page.locator("#bulk-panel[data-state=queued]").waitFor();
    await page.getByRole("button", { name: "Cancel operation" }).click();
    await page.locator("#bulk-panel[data-state=cancelled]").waitFor();
    await s.runOperation((await acmeOperation()).id);
    expect((await s.get(user7))!.status).toBe("pending");

    // erase wants the tag typed before it starts
    await page.getByLabel("Action", { exact: true }).selectOption("erase");
    await page.getByLabel("Tags (comma-separated, all of them)").fill("user:42");
    await page.getByRole("button", { name: "Count matching jobs" }).click();
    await page
      .locator("#bulk-question")
      .filter({ hasText: "Erase 3 jobs tagged user:42?" })
      .waitFor();
    const erase = page.getByRole("button", { name: "Yes, erase 3 jobs" });
    expect(await erase.isDisabled()).toBe(true);
    await page.getByLabel("Type user:42 to confirm").fill("user:4");
    expect(await erase.isDisabled()).toBe(true);
    await page.getByLabel("Type user:42 to confirm").fill("user:42");
    await erase.click();
    await page.locator("#bulk-panel[data-state=queued]").waitFor();
    await s.runOperation((await acmeOperation()).id);
    await page.locator("#bulk-panel[data-state=done]").waitFor();
    for (const id of user42) expect(await s.get(id)).toBeNull();
    await page.context().close();

    // at phone width neither page overflows sideways
    const phone = await open(375, 740);
    const overflow = () =>
      phone.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
    await signIn(phone, "key-acme", "#/jobs?tag=user%3A7");
    await phone.locator(`#jobs-table tr[data-id="${user7}"]`).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await phone.goto(`${d.base}/#/operations`);
    await phone.locator("#operations-table").waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: `${ARTIFACTS}phone-bulk.png`, fullPage: true });
    await s.cancel(user7);
    await phone.context().close();
  });

  it("pauses a target from the pauses page after confirming; its job is held, then fires once resumed", async () => {
    const s = d.scheduler;
    const fired: string[] = [];
    s.handle("mail", (job) => void fired.push(job.id));
    const { job } = await s.schedule({
      tenant: "acme",
      dueAt: d.clock.now() + 60_000,
      target: "mail",
    });
    const page = await open();
    await signIn(page, "key-acme", "#/jobs");
    await page.getByRole("link", { name: "Pauses", exact: true }).click();
    await page.getByLabel("Pause", { exact: true }).selectOption("target");
    await page.getByLabel("Target or tag").fill("mail");
    await page.getByRole("button", { name: "Pause…" }).click();
    await page
      .locator("#pause-question")
      .filter({ hasText: "Pause target mail? Nothing it covers fires" })
      .waitFor();
    expect(await s.listPauses({ tenant: "acme" })).toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}pause-confirm.png`, fullPage: true });
    await page.getByRole("button", { name: "Yes, pause target mail" }).click();
    await page.locator("#outcome").filter({ hasText: "Paused target mail." }).waitFor();
    const [pause] = await s.listPauses({ tenant: "acme" });
    expect(pause).toMatchObject({ scope: { target: "mail" }, onResume: "fire", state: "active" });
    const row = page.locator(`#pauses-table tr[data-id="${pause!.id}"]`);
    expect(await row.locator(".scope").textContent()).toBe("target mail");

    // the engine holds the job and, past its due time, does not fire it
    s.start();
    await d.clock.advance(2 * 60_000);
    await s.idle();
    expect(fired).toEqual([]);
    expect(await s.get(job.id)).toMatchObject({ status: "pending", pausedBy: pause!.id });
    // the page reads the list again while the pause is finding its jobs
    await page.locator(`#pauses-table tr[data-id="${pause!.id}"][data-held="1"]`).waitFor();
    expect(await row.locator(".state").textContent()).toBe("active");
    await page.screenshot({ path: `${ARTIFACTS}pauses-active.png`, fullPage: true });

    // the job page names its pause and links to it
    await page.goto(`${d.base}/#/jobs/${job.id}`);
    await page.locator("#job-paused-by").click();
    await page.locator(`#pauses-table tr[data-id="${pause!.id}"][aria-current="true"]`).waitFor();
    await row.getByRole("button", { name: "Resume target mail" }).click();
    await page.locator("#outcome").filter({ hasText: "Resumed target mail: 1 held job" }).waitFor();
    await d.clock.advance(1_000);
    await s.idle();
    expect(fired).toEqual([job.id]);
    expect((await s.get(job.id))!.status).toBe("succeeded");
    await page.locator(`#pauses-table tr[data-id="${pause!.id}"][data-state="resumed"]`).waitFor();
    expect(await row.locator(".action").textContent()).toBe("—");
    expect(await row.locator(".resumed time").getAttribute("datetime")).not.toBeNull();
    await page.screenshot({ path: `${ARTIFACTS}pauses-resumed.png`, fullPage: true });
    await s.stop();
    await page.context().close();

    // at phone width the page does not overflow sideways
    const phone = await open(375, 740);
    await signIn(phone, "key-acme", "#/pauses");
    await phone.locator("#pauses-table").waitFor();
    expect(await sideways(phone)).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: `${ARTIFACTS}phone-pauses.png`, fullPage: true });
    await phone.context().close();
  });

  it("pages the resumed pauses, the open ones always shown first and marked from a link", async () => {
    const s = d.scheduler;
    const made: string[] = [];
    for (let i = 0; i < 102; i++) {
      const p = await s.pause({ scope: { tag: `page-${i}` } }, { tenant: "globex" });
      await s.resume(p.id, { tenant: "globex" });
      await s.runPauseWork();
      made.push(p.id);
    }
    // made after the 102 resumed ones: last in creation order, shown first as it is open
    const active = await s.pause({ scope: { tag: "page-open" } }, { tenant: "globex" });
    await s.runPauseWork();
    const page = await open();
    // as the job page of a job it holds links to it
    await signIn(page, "key-globex", `#/pauses?id=${active.id}`);
    const rows = page.locator("#pauses-table tbody tr");
    const ids = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")));
    await page.locator(`#pauses-table tr[data-id="${active.id}"][aria-current="true"]`).waitFor();
    expect(await ids()).toEqual([active.id, ...made.slice(0, 100)]);
    expect(await page.getByRole("link", { name: "First page" }).count()).toBe(0);
    await page.getByRole("link", { name: "Next page" }).click();
    await page.locator(`#pauses-table tr[data-id="${made[101]}"]`).waitFor();
    expect(await ids()).toEqual([active.id, ...made.slice(100)]);
    expect(await page.getByRole("link", { name: "Next page" }).count()).toBe(0);
    await page.getByRole("link", { name: "First page" }).click();
    await page.locator(`#pauses-table tr[data-id="${made[0]}"]`).waitFor();
    expect(await rows.count()).toBe(101);
    await s.resume(active.id, { tenant: "globex" });
    await s.runPauseWork();
    await page.context().close();
  });

  // Last: its series add pending occurrences that the counts above do not expect.
  it("shows the schedules page and pauses and resumes a series with the version check", async () => {
    const s = d.scheduler;
    const weekdays = (
      await s.scheduleRecurring({
        tenant: "acme",
        cron: "0 9 * * 1-5",
        timeZone: "Europe/Paris",
        target: "noop",
      })
    ).schedule;
    const minutely = (
      await s.scheduleRecurring({
        tenant: "acme",
        cron: "* * * * *",
        timeZone: "UTC",
        target: "noop",
      })
    ).schedule;
    // one occurrence of the every-minute series fires, so its row has a last outcome
    s.start();
    await d.clock.advanceTo(minutely.nextAt!);
    await s.idle();
    await s.stop();

    const page = await open();
    await signIn(page, "key-acme", "#/schedules");
    const row = (id: string) => page.locator(`#schedules-table tr[data-id="${id}"]`);
    await row(weekdays.id).waitFor();
    const w = row(weekdays.id);
    expect(await w.locator(".rule").textContent()).toMatch(/09:00 \(Europe\/Paris\)0 9 \* \* 1-5$/);
    expect(await w.locator(".zone").textContent()).toBe("Europe/Paris");
    expect(await w.locator(".state").textContent()).toBe("active");
    expect(await w.locator(".next li").count()).toBe(5);
    // the times carry the exact instants the server computed
    const shown = await w
      .locator(".next time")
      .evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")));
    const wanted = (await s.getSchedule(weekdays.id))!;
    expect(shown[0]).toBe(new Date(wanted.nextAt!).toISOString());
    expect(await w.locator(".last").textContent()).toBe("—");
    const m = row(minutely.id);
    expect(await m.locator(".last .badge").textContent()).toBe("succeeded");
    expect(await m.locator(".n").textContent()).toBe("1");
    await page.screenshot({ path: `${ARTIFACTS}schedules.png`, fullPage: true });

    await w.getByRole("button", { name: /^Pause / }).click();
    await page.locator("#outcome").filter({ hasText: "Paused" }).waitFor();
    await page
      .locator(`#schedules-table tr[data-id="${weekdays.id}"][data-state=paused]`)
      .waitFor();
    expect((await s.getSchedule(weekdays.id))!.state).toBe("paused");
    expect(await w.locator(".next").textContent()).toBe("—");

    // changed elsewhere after the page loaded: the resume is refused, nothing changes
    await s.resumeSchedule(weekdays.id);
    await s.pauseSchedule(weekdays.id);
    const version = (await s.getSchedule(weekdays.id))!.version;
    await w.getByRole("button", { name: /^Resume / }).click();
    await page.locator("#outcome").filter({ hasText: "changed since this page loaded" }).waitFor();
    expect((await s.getSchedule(weekdays.id))!.state).toBe("paused");
    // the page reloaded the row at its current version; resuming now works
    await page
      .locator(`#schedules-table tr[data-id="${weekdays.id}"][data-version="${version}"]`)
      .waitFor();
    await w.getByRole("button", { name: /^Resume / }).click();
    await page.locator("#outcome").filter({ hasText: "Resumed" }).waitFor();
    await page
      .locator(`#schedules-table tr[data-id="${weekdays.id}"][data-state=active]`)
      .waitFor();
    expect((await s.getSchedule(weekdays.id))!.state).toBe("active");
    await page.context().close();

    // at phone width the page does not overflow sideways
    const phone = await open(375, 740);
    await signIn(phone, "key-acme", "#/schedules");
    await phone.locator("#schedules-table").waitFor();
    expect(await sideways(phone)).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: `${ARTIFACTS}phone-schedules.png`, fullPage: true });
    await phone.context().close();
  });
});
