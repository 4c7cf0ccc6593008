// Keyboard shortcuts: an element with data-key="x" is clicked (radios, links, buttons)
// or focused (text boxes) when x is pressed outside a text box. Ctrl+Enter submits
// the page's main form. The page also reports activity so idle time is not counted.
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
    var scope = document.querySelector("[data-key-scope].active") || document;
    var el = scope.querySelector('[data-key="' + CSS.escape(e.key) + '"]') ||
      document.querySelector('[data-key="' + CSS.escape(e.key) + '"]');
    if (!el) return;
    e.preventDefault();
    if (isTyping(el)) el.focus();
    else el.click();
  });

  var last = Date.now();
  ["keydown", "mousemove", "mousedown", "scroll", "input", "touchstart"].forEach(function (name) {
    window.addEventListener(name, function () { last = Date.now(); }, { passive: true, capture: true });
  });
  function heartbeat() {
    var node = document.querySelector("[data-heartbeat]");
    if (!node || Date.now() - last > 60000) return;
    var headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
    fetch(node.dataset.heartbeat, { method: "POST", headers: headers, credentials: "same-origin" });
  }
  setInterval(heartbeat, 15000);
})();
