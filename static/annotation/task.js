// Item pages: active time, refusals shown where they belong, drafts that survive a reload.
(function () {
  "use strict";
  var PREFIX = "draft:";
  // Lab machines are shared: logging out forgets every draft copy kept in this browser.
  document.addEventListener("submit", function (e) {
    if (!e.target.matches("form[data-logout]")) return;
    try {
      for (var i = localStorage.length - 1; i >= 0; i--) {
        var k = localStorage.key(i);
        if (k && k.indexOf(PREFIX) === 0) localStorage.removeItem(k);
      }
    } catch (err) { /* storage disabled: nothing was kept */ }
  });
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
    if (e.detail.parameters.action === "draft") order(e.detail.parameters);
  });
  // A stored submission or skip: this browser's copy is no longer needed.
  // (only those answer with a redirect to the next item)
  document.addEventListener("htmx:beforeOnLoad", function (e) {
    if (e.detail.xhr.status === 200 && e.detail.xhr.getResponseHeader("HX-Redirect")) forget();
  });

  // Drafts. Every change is copied at once into this browser (localStorage, one entry
  // per assignment) with a sequence number, and sent to the server a moment later and
  // when the page is hidden or left. A draft carries its number (draft_seq) and the
  // newest number this page knew to be stored or sent before the change (draft_base):
  // the server ignores a draft older than the one it holds and refuses one written on
  // top of an older one (another tab's), which is then told.
  var key = PREFIX + act.dataset.assignment;
  var tab = Math.random().toString(36).slice(2);
  var seq = Number(act.dataset.draftSeq || 0), base = seq, sentSeq = seq;
  var dirty = false, leaving = false;
  // Refused once (a newer draft is stored, from another tab or browser): this page stays
  // the older one until reloaded; its base never moves on to numbers it did not store.
  var stale = false;
  function local() {
    try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (err) { return null; }
  }
  function forget() { try { localStorage.removeItem(key); } catch (err) { /* disabled */ } }
  function controls(f) {
    return Array.prototype.filter.call(f.elements, function (n) {
      return n.name && n.name !== "csrfmiddlewaretoken" && !/^(hidden|submit|button)$/.test(n.type);
    });
  }
  function snapshot(f) {
    return controls(f).filter(function (n) { return !/^(radio|checkbox)$/.test(n.type) || n.checked; })
      .map(function (n) { return [n.name, n.value]; });
  }
  function restore(f, values) {
    controls(f).forEach(function (n) {
      var mine = values.filter(function (v) { return v[0] === n.name; });
      if (/^(radio|checkbox)$/.test(n.type)) n.checked = mine.some(function (v) { return v[1] === n.value; });
      else n.value = mine.length ? mine[0][1] : "";
    });
  }
  function edited() {
    var f = form(), held = local();
    if (!f) return;
    dirty = true;
    if (!stale) base = Math.max(base, sentSeq);
    seq = Math.max(seq, held ? held.seq : 0) + 1;
    try {
      localStorage.setItem(key, JSON.stringify({ seq: seq, tab: tab, values: snapshot(f) }));
    } catch (err) { /* storage full or disabled: the server copy remains */ }
  }
  var restored = false;  // the next draft sent is the one restored from this browser
  function order(params) {
    if (seq <= base) edited();  // "Save draft" without a change: number it all the same
    if (restored) params.restored = "1";
    restored = false;
    params.draft_seq = seq;
    params.draft_base = base;
    sentSeq = seq;
  }
  ["input", "change"].forEach(function (name) {
    document.addEventListener(name, function (e) {
      if (!leaving && form() && form().contains(e.target)) edited();
    });
  });
  // Another tab of this browser changed the same item: this one is now the older one.
  var other = document.getElementById("draft-other");
  window.addEventListener("storage", function (e) {
    if (e.key !== key || !e.newValue || !other) return;
    var held = JSON.parse(e.newValue);
    if (held.tab === tab || held.seq <= seq) return;
    stale = true;
    other.textContent = "This item was changed in another tab or window: reload this page to continue "
      + "from that version (saving here would be refused).";
    other.hidden = false;
    announce(other.textContent);
  });
  // On load: the newer of the server's draft and this browser's copy.
  (function () {
    var f = form(), held = local();
    if (act.dataset.status === "submitted") { forget(); return; }
    if (!f || !held || held.seq <= seq) return;
    restore(f, held.values);
    seq = held.seq;
    var ds = document.getElementById("draft-status");
    if (ds) ds.textContent = "Draft restored.";
    restored = true;
    // sent to the server as well, once htmx listens (it starts on DOMContentLoaded)
    document.addEventListener("DOMContentLoaded", function () {
      var now = form();
      if (now) now.dispatchEvent(new Event("change", { bubbles: true }));
    });
  })();
  function saveNow() {
    count();
    var f = form();
    if (f && dirty && !leaving) {
      var data = new FormData(f);
      var params = { action: "draft", page: act.dataset.page, seconds: seconds() };
      order(params);
      Object.keys(params).forEach(function (k) { data.set(k, params[k]); });
      sent = active;
      dirty = false;
      post(f.getAttribute("hx-post"), data, true)
        .then(function (r) { if (r.status === 409) stale = true; })
        .catch(function () {});
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
    var p = e.detail.requestConfig && e.detail.requestConfig.parameters;
    if (e.detail.xhr.status === 409 && p && p.action === "draft") stale = true;
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
