// Roundhouse table chat: live updates of the chat box over Server-Sent Events
// (/tables/{id}/chat/events). Each "chat" event swaps the server-rendered box in again
// (htmx GET /tables/{id}/chat); the text is escaped by the server. No inline script.
(function () {
  "use strict";
  let source = null, busy = false, again = false;
  const box = () => document.getElementById("chat");

  function refresh() {
    const el = box();
    if (!el) return;
    if (busy) { again = true; return; }
    busy = true;
    htmx.ajax("GET", "/tables/" + el.dataset.table + "/chat", { target: "#chat", swap: "outerHTML" })
      .finally(() => { busy = false; if (again) { again = false; refresh(); } });
  }

  function connect() {
    const el = box();
    if (!el || source || el.dataset.live !== "yes") return;
    source = new EventSource("/tables/" + el.dataset.table + "/chat/events?after=" +
      encodeURIComponent(el.dataset.last || ""));
    source.addEventListener("chat", (ev) => {
      const cur = box();
      if (cur && ev.data !== cur.dataset.last) refresh();
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    connect();
    document.body.addEventListener("htmx:afterSwap", connect);
  });
})();
