/* The escalation queue asks for attention: the number of escalations waiting for an agent goes into the tab
 * title ("(3) Desk · TraceDesk"), and, once the agent allowed it with the page's button, a browser
 * notification says when that number grows. The count comes from the polled list (data-waiting-count),
 * so it follows the queue every 5 seconds; without JavaScript the page still shows the counts.
 */
(function () {
  "use strict";

  var baseTitle = document.title.replace(/^\(\d+\) /, "");
  var last = null;

  function button() { return document.getElementById("notify-button"); }

  function update() {
    var holder = document.querySelector("[data-waiting-count]");
    if (!holder) return;
    var waiting = parseInt(holder.getAttribute("data-waiting-count"), 10) || 0;
    document.title = waiting ? "(" + waiting + ") " + baseTitle : baseTitle;
    if (last !== null && waiting > last && window.Notification && Notification.permission === "granted") {
      var more = waiting - last;
      new Notification("TraceDesk", {
        body: more === 1 ? "A new escalation is waiting." : more + " new escalations are waiting.",
        tag: "tracedesk-queue"
      });
    }
    last = waiting;
    var ask = button();
    if (ask) ask.hidden = !window.Notification || Notification.permission !== "default";
  }

  document.addEventListener("DOMContentLoaded", update);
  document.addEventListener("htmx:afterSwap", update);
  document.addEventListener("click", function (event) {
    var ask = event.target.closest ? event.target.closest("#notify-button") : null;
    if (!ask || !window.Notification) return;
    Notification.requestPermission().then(update);
  });
})();
