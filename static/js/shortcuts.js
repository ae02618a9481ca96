/* Keyboard shortcuts (vendored, no dependencies), for the review page and the agent desk.
 *
 * Every element with data-shortcut="<key>" answers to that key:
 *   - a link is followed (n: next, p: previous);
 *   - a radio or checkbox is checked; with data-shortcut-submit its form is sent at once (pass, defer),
 *     with data-shortcut-focus the named field gets the cursor instead (fail: write the sentence);
 *   - a button with data-shortcut-submit sends its form (t: take over);
 *   - a <details> opens or closes (?: the list of keys); anything else gets the cursor (r: reply, n: note).
 * A list with data-shortcut-list holds rows with data-href: j / k move to the next / previous row, Enter
 * opens it. In a form with data-ctrl-enter, Ctrl+Enter (Cmd+Enter on a Mac) sends it from any of its fields.
 * Single keys are ignored while typing in a text field and when a modifier is held, so the alt+key access
 * keys and the browser's own shortcuts keep working. Everything here is also a link or a button.
 */
(function () {
  "use strict";

  function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable) return true;
    var tag = target.tagName.toLowerCase();
    if (tag === "textarea" || tag === "select") return true;
    if (tag !== "input") return false;
    var type = (target.getAttribute("type") || "text").toLowerCase();
    return ["checkbox", "radio", "button", "submit", "reset", "image", "file", "range", "color"].indexOf(type) < 0;
  }

  function send(form) {
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  // j / k / Enter over the rows of a list; the current row survives the list being polled and swapped.
  var currentHref = null;

  function rows() {
    var list = document.querySelector("[data-shortcut-list]");
    return list ? Array.prototype.slice.call(list.querySelectorAll("[data-href]")) : [];
  }

  function mark(all, index) {
    all.forEach(function (row, i) { row.classList.toggle("kb-current", i === index); });
    if (index >= 0) {
      currentHref = all[index].getAttribute("data-href");
      all[index].setAttribute("aria-current", "true");
      if (all[index].scrollIntoView) all[index].scrollIntoView({ block: "nearest" });
    }
  }

  function move(step) {
    var all = rows();
    if (!all.length) return false;
    var index = all.findIndex(function (row) { return row.getAttribute("data-href") === currentHref; });
    index = index < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, index + step));
    mark(all, index);
    return true;
  }

  document.addEventListener("htmx:afterSwap", function () {
    if (!currentHref) return;
    var all = rows();
    mark(all, all.findIndex(function (row) { return row.getAttribute("data-href") === currentHref; }));
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.form &&
        event.target.form.hasAttribute("data-ctrl-enter")) {
      event.preventDefault();
      send(event.target.form);
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (typing(event.target)) return;
    if (event.key === "Enter" && currentHref && !(event.target.closest && event.target.closest("a, button"))) {
      event.preventDefault();
      window.location.assign(currentHref);
      return;
    }
    var key = event.key || "";
    if (key.length !== 1) return;
    key = key.toLowerCase();
    if ((key === "j" || key === "k") && move(key === "j" ? 1 : -1)) {
      event.preventDefault();
      return;
    }
    var element = document.querySelector('[data-shortcut="' + key + '"]');
    if (!element) return;
    event.preventDefault();
    var tag = element.tagName.toLowerCase();
    if (tag === "a") {
      window.location.assign(element.href);
      return;
    }
    if (tag === "details") {
      element.open = !element.open;
      if (element.open) element.scrollIntoView({ block: "nearest" });
      return;
    }
    if (element.type === "radio" || element.type === "checkbox") {
      element.checked = true;
      element.dispatchEvent(new Event("change", { bubbles: true }));
    }
    var focus = element.getAttribute("data-shortcut-focus");
    if (focus && element.form && element.form.elements[focus]) {
      element.form.elements[focus].focus();
    } else if (element.hasAttribute("data-shortcut-submit") && element.form) {
      send(element.form);
    } else {
      element.focus();
    }
  });
})();
