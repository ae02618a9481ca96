/* Single-key shortcuts on the review page (vendored, no dependencies).
 *
 * Every element with data-shortcut="<key>" answers to that key:
 *   - a link is followed (n: next, p: previous);
 *   - a verdict radio is checked; with data-shortcut-submit its form is sent at once (pass, defer),
 *     with data-shortcut-focus the named field gets the cursor instead (fail: write the sentence).
 * Keys are ignored while typing in a text field, and when a modifier is held, so the alt+key access keys
 * and the browser's own shortcuts keep working.
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

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    if (typing(event.target)) return;
    var key = (event.key || "").toLowerCase();
    if (key.length !== 1) return;
    var element = document.querySelector('[data-shortcut="' + key + '"]');
    if (!element) return;
    event.preventDefault();
    if (element.tagName.toLowerCase() === "a") {
      window.location.assign(element.href);
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
      if (element.form.requestSubmit) element.form.requestSubmit(); else element.form.submit();
    } else {
      element.focus();
    }
  });
})();
