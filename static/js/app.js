/* Page behaviour that would otherwise be inline (the Content-Security-Policy allows scripts from files only).
 *
 *   - <form data-reset-after-request>: cleared once its htmx request completes (the web chat);
 *   - <a data-fill="TEXT" data-fill-into="ID" data-fill-mode="insert|replace">: puts TEXT into the field ID,
 *     at the cursor or instead of its text, and focuses it (canned replies, the bot's draft). Without
 *     JavaScript the link's href does the same on the server.
 * Listeners sit on the document, so content htmx swaps in later works too.
 */
(function () {
  "use strict";

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.target;
    if (form && form.matches && form.matches("form[data-reset-after-request]")) form.reset();
  });

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("[data-fill-into]") : null;
    if (!link) return;
    var field = document.getElementById(link.getAttribute("data-fill-into"));
    if (!field) return;
    event.preventDefault();
    var text = link.getAttribute("data-fill") || "";
    if (link.getAttribute("data-fill-mode") === "replace") {
      field.value = text;
    } else {
      field.setRangeText(text, field.selectionStart, field.selectionEnd, "end");
    }
    field.focus();
  });
})();
