// Keyboard shortcuts: an element with data-key="x" is clicked (radios, links, buttons)
// or focused (text boxes) when x is pressed outside a text box. Ctrl+Enter submits
// the page's main form. Item pages' active time and refusals: task.js.
(function () {
  "use strict";
  function isTyping(el) {
    return el.matches("textarea, select, input:not([type=radio]):not([type=checkbox]):not([type=submit]):not([type=button])");
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      var form = (t.closest && t.closest("form[data-submit-on-ctrl-enter]")) ||
        document.querySelector("form[data-submit-on-ctrl-enter]");
      if (form) {
        e.preventDefault();
        form.requestSubmit(form.querySelector("[data-primary-submit]"));
      }
      return;
    }
    if (e.key === "Escape" && isTyping(t)) { t.blur(); return; }
    if (isTyping(t) || e.ctrlKey || e.metaKey || e.altKey) return;
    var scopes = Array.prototype.slice.call(document.querySelectorAll("[data-key-scope]"));
    var scope = document.querySelector("[data-key-scope].active");
    if (scopes.length && (e.key === "j" || e.key === "k")) {
      e.preventDefault();
      var i = scopes.indexOf(scope) + (e.key === "j" ? 1 : -1);
      activate(scopes[Math.max(0, Math.min(scopes.length - 1, i))]);
      return;
    }
    // Keys inside the active result or segment first, then the page's own keys
    // (outside every scope), so "1" means an error type in a segment, a label elsewhere.
    var sel = '[data-key="' + CSS.escape(e.key) + '"]';
    var el = (scope && scope.querySelector(sel)) ||
      Array.prototype.find.call(document.querySelectorAll(sel), function (n) { return !n.closest("[data-key-scope]"); });
    if (!el) return;
    e.preventDefault();
    if (isTyping(el)) {
      var box = el.closest("details");
      if (box && !box.open) box.open = true;  // the skip reason, a fact's Why? box
      el.focus();
      if (el.setSelectionRange) el.setSelectionRange(el.value.length, el.value.length);  // type after what is there
    } else {
      el.click();
      (el.closest("fieldset") || el).scrollIntoView({ block: "nearest" });  // the change is seen, even on a long page
    }
  });

  function activate(scope) {
    if (!scope) return;
    document.querySelectorAll("[data-key-scope].active").forEach(function (s) { s.classList.remove("active"); });
    scope.classList.add("active");
    scope.focus({ preventScroll: true });
    scope.scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("focusin", function (e) {
    var scope = e.target.closest && e.target.closest("[data-key-scope]");
    if (scope && !scope.classList.contains("active")) {
      document.querySelectorAll("[data-key-scope].active").forEach(function (s) { s.classList.remove("active"); });
      scope.classList.add("active");
    }
  });
  function activateFirst() {
    if (!document.querySelector("[data-key-scope].active")) {
      var first = document.querySelector("[data-key-scope]");
      if (first) first.classList.add("active");
    }
  }
  document.addEventListener("DOMContentLoaded", activateFirst);
  document.addEventListener("htmx:afterSettle", activateFirst);

  // Atomic facts: the active fact's sentence is marked in the response, scrolled into
  // view inside the response's own box (not the page).
  function markSentence() {
    var scope = document.querySelector("[data-key-scope].active");
    var id = scope && scope.getAttribute("data-sentence");
    document.querySelectorAll(".sentence.current").forEach(function (n) {
      if (n.id !== id) n.classList.remove("current");
    });
    var mark = id && document.getElementById(id);
    if (!mark || mark.classList.contains("current")) return;
    mark.classList.add("current");
    var box = mark.closest(".response");
    if (box) box.scrollTop = Math.max(0, mark.offsetTop - box.clientHeight / 3);
  }
  if (window.MutationObserver) {
    new MutationObserver(markSentence).observe(document.documentElement, { subtree: true, attributes: true, attributeFilter: ["class"] });
  }

  // The verification page's claim and label row stick to the top and bottom (site.css):
  // scrolling a result or a radio into view must keep it clear of them, so the scroller's
  // padding follows their heights.
  function stickyPadding() {
    var top = 0, bottom = 0;
    document.querySelectorAll("section.claim, fieldset.claim-label").forEach(function (n) {
      var cs = getComputedStyle(n);
      if (cs.position !== "sticky") return;
      if (cs.top !== "auto") top = Math.max(top, n.offsetHeight);
      if (cs.bottom !== "auto") bottom = Math.max(bottom, n.offsetHeight);
    });
    document.documentElement.style.scrollPaddingTop = top ? top + 8 + "px" : "";
    document.documentElement.style.scrollPaddingBottom = bottom ? bottom + 8 + "px" : "";
  }
  document.addEventListener("DOMContentLoaded", stickyPadding);
  document.addEventListener("htmx:afterSettle", stickyPadding);
  window.addEventListener("resize", stickyPadding);

  // Progress bars carry their width as data-percent: the CSP allows no style attribute.
  function bars() {
    document.querySelectorAll(".bar[data-percent]").forEach(function (b) {
      b.style.width = b.dataset.percent + "%";
    });
  }
  document.addEventListener("DOMContentLoaded", bars);
  document.addEventListener("htmx:afterSettle", bars);

})();
// The report page fills in its body once computed (htmx): a failure says so instead of
// leaving the progress note up.
document.addEventListener("htmx:responseError", function (e) {
  var target = e.detail && e.detail.elt;
  if (!target || target.id !== "report-body") return;
  var note = target.querySelector("[role=status]");
  if (note) note.textContent = "The report could not be computed (error " + e.detail.xhr.status + "). Reload the page to try again.";
  var bar = target.querySelector("progress");
  if (bar) bar.remove();
});
