import "./style.css";
import { apiKey, clearApiKey, setApiKey, whenUnauthorized } from "./api.js";
import { LiveFeed, type LiveState } from "./live.js";
import type { Page } from "./pages/context.js";
import { futurePage } from "./pages/future.js";
import { jobPage } from "./pages/job.js";
import { jobsPage } from "./pages/jobs.js";
import { renderLogin } from "./pages/login.js";
import { nowPage } from "./pages/now.js";
import { operationsPage } from "./pages/operations.js";
import { pausesPage } from "./pages/pauses.js";
import { schedulesPage } from "./pages/schedules.js";

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
const liveBadge = document.getElementById("live")!;
const signOut = document.getElementById("signout") as HTMLButtonElement;

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: "Connecting…",
  live: "Live",
  offline: "Offline, retrying",
};
const live = new LiveFeed((s) => {
  liveBadge.textContent = LIVE_TEXT[s];
  liveBadge.dataset.state = s;
});
live.onReset(() => route());

let dispose: () => void = () => undefined;

/** Hash routes: #/future, #/now, #/jobs?..., #/jobs/<id>, #/schedules?cursor=..., #/operations?..., #/pauses?id=... */
function route(): void {
  dispose();
  dispose = () => undefined;
  if (apiKey() === null) return showLogin(null);
  nav.hidden = false;
  liveBadge.hidden = false;
  signOut.hidden = false;
  live.start();
  const [path = "", search = ""] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  let page: Page = futurePage;
  let arg: string | undefined;
  if (parts[0] === "now") page = nowPage;
  else if (parts[0] === "jobs" && parts[1]) [page, arg] = [jobPage, decodeURIComponent(parts[1])];
  else if (parts[0] === "jobs") page = jobsPage;
  else if (parts[0] === "schedules") page = schedulesPage;
  else if (parts[0] === "operations") page = operationsPage;
  else if (parts[0] === "pauses") page = pausesPage;
  const current = parts[0] ?? "future";
  for (const a of nav.querySelectorAll("a")) {
    if (a.dataset.page === current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  dispose = page(
    { root: main, params: new URLSearchParams(search), live, go: (hash) => (location.hash = hash) },
    arg,
  );
}

function showLogin(message: string | null): void {
  live.stop();
  nav.hidden = true;
  liveBadge.hidden = true;
  signOut.hidden = true;
  renderLogin(main, message, (key) => {
    setApiKey(key);
    route();
  });
}

whenUnauthorized(() => {
  clearApiKey();
  dispose();
  dispose = () => undefined;
  showLogin("That key was not accepted. Check it and try again.");
});
signOut.addEventListener("click", () => {
  clearApiKey();
  dispose();
  dispose = () => undefined;
  showLogin(null);
});
window.addEventListener("hashchange", route);
route();
