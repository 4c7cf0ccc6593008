// Item pages: active time, refusals shown where they belong, drafts that survive a reload.
(function () {
  "use strict";
  var act = document.getElementById("activity");
  if (!act) return;
  var form = function () { return document.getElementById("answer-form"); };
  var headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");

  // Active time: the sum of the gaps between activity events on a visible page, each
  // gap capped at IDLE_SECONDS, counted for this page instance only (its token).
  var cap = 1000 * Number(act.dataset.idle || 60);
  var active = 0, sent = 0;
  var last = document.visibilityState === "visible" ? performance.now() : null;
  function count() {
    var now = performance.now();
    if (last !== null) active += Math.min(now - last, cap);
    last = document.visibilityState === "visible" ? now : null;
  }
  ["keydown", "pointerdown", "pointermove", "scroll", "focusin", "input", "touchstart", "wheel"].forEach(function (name) {
    window.addEventListener(name, count, { passive: true, capture: true });
  });
  function seconds() { return (active / 1000).toFixed(3); }
  function post(url, data, keepalive) {
    var body = new URLSearchParams(data);
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin", keepalive: !!keepalive });
  }
  function heartbeat(keepalive) {
    if (active === sent) return;
    sent = active;
    post(act.dataset.heartbeat, { page: act.dataset.page, seconds: seconds() }, keepalive).catch(function () {});
  }
  setInterval(function () { heartbeat(false); }, 15000);
  // Every request of the page carries the page instance and its active time.
  document.addEventListener("htmx:configRequest", function (e) {
    if (e.detail.verb !== "post") return;
    count();
    e.detail.parameters.page = act.dataset.page;
    e.detail.parameters.seconds = seconds();
    sent = active;
  });

  // Drafts: a change not yet stored is saved when the page is hidden or left.
  var dirty = false, leaving = false;
  document.addEventListener("input", function (e) { if (form() && form().contains(e.target)) dirty = true; });
  document.addEventListener("change", function (e) { if (form() && form().contains(e.target)) dirty = true; });
  function saveNow() {
    count();
    var f = form();
    if (f && dirty && !leaving) {
      var data = new FormData(f);
      data.set("action", "draft");
      data.set("page", act.dataset.page);
      data.set("seconds", seconds());
      sent = active;
      dirty = false;
      post(f.getAttribute("hx-post"), data, true).catch(function () {});
    } else {
      heartbeat(true);
    }
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") saveNow(); else count();
  });
  window.addEventListener("pagehide", saveNow);

  // Refusals: what the server refused is shown next to its control, focused, in view
  // and announced; nothing claims a draft was stored when it was not.
  var live = document.getElementById("announce");
  function announce(text) { if (live) { live.textContent = ""; live.textContent = text; } }
  function isSubmit(e) {
    var p = e.detail.requestConfig && e.detail.requestConfig.parameters;
    return e.detail.elt && e.detail.elt.id === "answer-form" && !(p && p.action === "draft");
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    var p = e.detail.requestConfig && e.detail.requestConfig.parameters;
    if (isSubmit(e) || (p && p.action === "skip")) {
      leaving = true;
      var box = document.getElementById(p && p.action === "skip" ? "skip-error" : "submit-error");
      if (box) box.hidden = true;  // a new attempt: the old refusal no longer stands
    }
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.xhr.status === 409) { e.detail.shouldSwap = true; e.detail.isError = false; }
  });
  function failed(e) {
    var p = e.detail.requestConfig && e.detail.requestConfig.parameters;
    leaving = false;
    var status = e.detail.xhr && e.detail.xhr.status;
    var why = status ? "the server answered with error " + status + (status === 503 || status === 500 ? " (it may be busy)" : "")
      : "the server could not be reached";
    if (p && p.action === "draft") {
      dirty = true;
      var ds = document.getElementById("draft-status");
      if (ds) ds.textContent = "Draft NOT saved: " + why + ".";
      return;
    }
    var box = document.getElementById(p && p.action === "skip" ? "skip-error" : "submit-error");
    if (!box) return;
    box.textContent = "Not stored: " + why + ". Your answers are still on this page; try again.";
    box.hidden = false;
    box.scrollIntoView({ block: "center" });
    box.focus();
    announce(box.textContent);
  }
  document.addEventListener("htmx:responseError", failed);
  document.addEventListener("htmx:sendError", failed);

  function controlFor(err) {
    var pick = function (n) {
      if (!n) return null;
      if (n.matches("input:not([type=hidden]), textarea, select")) return n;
      return n.querySelector("input:checked") || n.querySelector("textarea, select, input:not([type=hidden])");
    };
    return pick(err.previousElementSibling) || pick(err.closest("fieldset, details, label")) || null;
  }
  var activeScope = null;
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (!e.detail.target || e.detail.target.id !== "answer-form") return;  // not a draft status
    var s = document.querySelector("[data-key-scope].active");
    activeScope = s && s.id;
  });
  function showRefusal(err) {
    leaving = false;
    var target = err.matches(".errors") ? err : (controlFor(err) || err);
    if (target === err) err.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
    if (target.matches("textarea, input[type=text]")) target.setSelectionRange(target.value.length, target.value.length);
    err.scrollIntoView({ block: "center" });
    announce(err.textContent.trim());
  }
  function firstError(id) {
    var n = document.getElementById(id);
    return n && n.querySelector(".errors:not([hidden]), p.error:not([hidden])");
  }
  // After settling: htmx restores the new elements' own attributes (class) only then.
  document.addEventListener("htmx:afterSettle", function (e) {
    var id = e.detail.target && e.detail.target.id;
    if (id === "answer-form" && activeScope) {
      var s = document.getElementById(activeScope);
      if (s) {
        document.querySelectorAll("[data-key-scope].active").forEach(function (n) { n.classList.remove("active"); });
        s.classList.add("active");
      }
    }
    if (id !== "answer-form" && id !== "skip") return;
    var err = firstError(id);
    if (err) showRefusal(err);
  });
  // A page rendered with errors without a round trip (no htmx) gets the same treatment.
  document.addEventListener("DOMContentLoaded", function () {
    var err = firstError("answer-form");
    if (err) showRefusal(err);
  });
})();
