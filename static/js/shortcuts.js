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

  // j / k / Enter over the rows of a list. The current row is remembered by its id, so it survives the list
  // being polled and swapped (the inbox's #rows every 5 s): the new copy of that row is marked again, and a
  // row that left the list is no longer current (Enter never opens a row the agent cannot see).
  var currentId = null;

  function rows() {
    var list = document.querySelector("[data-shortcut-list]");
    return list ? Array.prototype.slice.call(list.querySelectorAll("[data-href]")) : [];
  }

  function mark(all, index, scroll) {
    all.forEach(function (row, i) {
      row.classList.toggle("kb-current", i === index);
      if (i === index) row.setAttribute("aria-current", "true"); else row.removeAttribute("aria-current");
    });
    currentId = index >= 0 ? all[index].id || null : null;
    if (index >= 0 && scroll && all[index].scrollIntoView) all[index].scrollIntoView({ block: "nearest" });
  }

  function indexOfCurrent(all) {
    if (!currentId) return -1;
    return all.findIndex(function (row) { return row.id === currentId; });
  }

  function move(step) {
    var all = rows();
    if (!all.length) return false;
    var index = indexOfCurrent(all);
    index = index < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, index + step));
    mark(all, index, true);
    return true;
  }

  function restore() {
    if (currentId) mark(rows(), indexOfCurrent(rows()), false);
  }

  // htmx:load fires on the new content itself (in the page), htmx:afterSettle once the swap has settled.
  document.addEventListener("htmx:load", restore);
  document.addEventListener("htmx:afterSettle", restore);

  function currentHref() {
    var all = rows();
    var index = indexOfCurrent(all);
    return index >= 0 ? all[index].getAttribute("data-href") : null;
  }

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
    if (event.key === "Enter" && currentId && !(event.target.closest && event.target.closest("a, button"))) {
      var href = currentHref();
      if (!href) return;
      event.preventDefault();
      window.location.assign(href);
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
