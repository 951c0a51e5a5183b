// Roundhouse table pages: live updates over Server-Sent Events (/tables/{id}/events).
// Each move event newer than the page refreshes the #live part (htmx GET .../live); a
// running clock counts down between updates. No game logic here.
(function () {
  "use strict";
  let busy = false, again = false, source = null;
  const live = () => document.getElementById("live");

  function refresh() {
    const el = live();
    if (!el) return;
    if (busy) { again = true; return; }
    busy = true;
    htmx.ajax("GET", "/tables/" + el.dataset.table + "/live", { target: "#live", swap: "outerHTML" })
      .finally(() => { busy = false; if (again) { again = false; refresh(); } });
  }

  function connect() {
    const el = live();
    if (!el || source || el.dataset.status !== "running" || el.dataset.finished === "yes") return;
    source = new EventSource("/tables/" + el.dataset.table + "/events?after=" + el.dataset.version);
    source.addEventListener("move", (ev) => {
      const d = JSON.parse(ev.data), cur = live();
      if (cur && d.version > Number(cur.dataset.version)) refresh();
    });
    source.addEventListener("end", () => { source.close(); refresh(); });
  }

  function tick() {
    document.querySelectorAll(".clock.running").forEach((c) => {
      const deadline = Number(c.dataset.deadline);
      if (!deadline) return;
      const ms = Math.max(0, deadline - Date.now());
      const s = Math.floor(ms / 1000);
      c.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    });
  }

  // board zoom: 1 (fit the width) to 4 times; kept across the live part's refreshes
  let zoom = 1;
  function applyZoom() {
    const b = document.getElementById("board");
    if (!b) return;
    for (let z = 2; z <= 4; z++) b.classList.toggle("zoom-" + z, z === zoom);
  }
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest("button[data-zoom]");
    if (!btn) return;
    const step = Number(btn.dataset.zoom);
    zoom = step === 0 ? 1 : Math.min(4, Math.max(1, zoom + step));
    applyZoom();
  });

  document.addEventListener("DOMContentLoaded", () => {
    connect();
    setInterval(tick, 500);
    // an open table starts when its seats fill: the swapped-in part may be a running game
    document.body.addEventListener("htmx:afterSwap", connect);
    // the swapped-in board (htmx:load: afterSwap fires on the replaced, detached part)
    document.body.addEventListener("htmx:load", applyZoom);
  });
})();
