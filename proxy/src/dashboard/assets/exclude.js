// The live feed's "exclude" button: an admin turns a killed request's event into a proposed
// policy exclusion (POST /api/exclusions), reads the proposal, and confirms or cancels it.
// Same security rule as app.js: event data reaches the page through textContent only.
"use strict";

window.RampartExclude = (() => {
  // A field the policy can name (events also say `path` or `body` for an unstructured body:
  // those are excluded on the whole route instead).
  const SELECTOR = /^(query|body|header|cookie):./;
  let h = null; // helpers from app.js: $, el, api
  let enabled = false;
  let current = null; // { event_id, field }

  function show(text, kind) {
    const status = h.$("exclude-status");
    status.textContent = text;
    status.dataset.kind = kind || "";
  }

  async function post(body) {
    const res = await fetch("/api/exclusions", {
      method: "POST",
      cache: "no-store",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    let json = null;
    try {
      json = await res.json();
    } catch (_) {
      json = null;
    }
    if (!res.ok) throw new Error((json && (json.detail || json.error)) || `HTTP ${res.status}`);
    return json;
  }

  async function propose(ev) {
    const panel = h.$("exclude-panel");
    current = { event_id: String(ev.event_id || ev.request_id) };
    if (SELECTOR.test(String(ev.field || ""))) current.field = String(ev.field);
    h.$("exclude-what").textContent =
      `${ev.method} ${ev.path} · ${ev.reason || ev.detector}` + (current.field ? ` · in ${current.field}` : " · on the whole route");
    h.$("exclude-proposal").textContent = "";
    h.$("exclude-confirm").disabled = true;
    panel.hidden = false;
    show("Asking for a proposal…");
    try {
      const answer = await post(current);
      h.$("exclude-proposal").textContent = answer.proposal.trim();
      h.$("exclude-confirm").disabled = false;
      show("Nothing is changed until you confirm.");
    } catch (err) {
      show(`No proposal: ${err.message}`, "error");
    }
  }

  async function confirm() {
    if (!current) return;
    h.$("exclude-confirm").disabled = true;
    show("Writing it to the policy file…");
    try {
      await post({ ...current, confirm: true });
      show("Applied: the exclusion is in the policy file and in force.", "ok");
      current = null;
    } catch (err) {
      show(`Not applied: ${err.message}`, "error");
      h.$("exclude-confirm").disabled = false;
    }
  }

  function cancel() {
    current = null;
    h.$("exclude-panel").hidden = true;
  }

  /** The button for a feed row's event, or null (nothing a rule or detector decided). */
  function button(ev) {
    if (!enabled || (ev.action !== "shadow_kill" && ev.action !== "active_kill")) return null;
    if (!ev.detector || ev.detector === "ip-deny" || ev.detector === "rate-limit" || ev.detector === "body-limit") return null;
    const btn = h.el("button", "btn btn-small btn-exclude", "exclude", { type: "button" });
    btn.title = "Propose a policy exclusion for this event";
    btn.addEventListener("click", () => propose(ev));
    return btn;
  }

  async function init(helpers) {
    h = helpers;
    h.$("exclude-confirm").addEventListener("click", confirm);
    h.$("exclude-cancel").addEventListener("click", cancel);
    try {
      const policy = await h.api("/_waf/dashboard/policy.json");
      enabled = Boolean(policy.policy_file);
    } catch (_) {
      enabled = false;
    }
    // Without a policy file there is nowhere to write an exclusion: say so instead of a button.
    h.$("exclude-off").hidden = enabled;
  }

  return { init, button };
})();
