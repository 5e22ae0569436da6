import { h } from "../dom.js";

/**
 * Asks for the API key once; it is kept in sessionStorage (this tab, until it closes) and
 * sent as a Bearer token, never put in a URL.
 */
export function renderLogin(
  root: HTMLElement,
  message: string | null,
  onKey: (key: string) => void,
): void {
  const input = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "current-password",
    required: true,
    spellcheck: "false",
    "aria-describedby": message ? "key-help key-error" : "key-help",
  });
  const form = h(
    "form",
    { class: "card login", "aria-labelledby": "login-title" },
    h("h1", { id: "login-title" }, "Sign in"),
    h("label", { for: "api-key" }, "API key"),
    input,
    h(
      "p",
      { id: "key-help", class: "hint" },
      "The key of your tenant. It is kept only in this browser tab and sent with each request.",
    ),
    message ? h("p", { id: "key-error", class: "error", role: "alert" }, message) : null,
    h("button", { type: "submit" }, "Open dashboard"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (key !== "") onKey(key);
  });
  root.replaceChildren(form);
  input.focus();
}
