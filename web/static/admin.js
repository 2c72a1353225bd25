import { eventLine } from "./eventline.js";

// Optional live refresh for the operator's pages. A page that wants it
// carries data-refresh="<seconds>" on an element with an id; every few
// seconds the page is fetched again and that element replaced. Without
// JavaScript the pages read the same, only not live. Refresh pauses while
// the tab is hidden or a form field has focus.
const el = document.querySelector("[data-refresh][id]");
if (el) {
  const every = Math.max(2, Number(el.dataset.refresh) || 5) * 1000;
  const tick = async () => {
    const a = document.activeElement;
    if (document.hidden || (a && a.closest("form"))) return;
    try {
      const r = await fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (!r.ok) return;
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      const fresh = doc.getElementById(el.id);
      const cur = document.getElementById(el.id);
      if (fresh && cur) {
        renderEvents(fresh);
        cur.replaceWith(fresh);
      }
    } catch {
      // offline for a moment: try again on the next tick
    }
  };
  setInterval(tick, every);
}

// Forms marked data-confirm ask before they post (moderation buttons).
document.addEventListener("submit", (ev) => {
  const f = ev.target;
  if (f instanceof HTMLFormElement && f.dataset.confirm && !window.confirm(f.dataset.confirm)) {
    ev.preventDefault();
  }
});

// The event log reads as the players' log does: each row carries its
// event, and the one renderer of an event line (eventline.js) writes it.
// Without JavaScript the server's short text stays.
function renderEvents(root) {
  const log = root.querySelector("#admin-events");
  if (!log) return;
  let party = {};
  try {
    party = JSON.parse(log.dataset.party || "{}");
  } catch {
    // no names: lines say "Someone"
  }
  for (const cell of log.querySelectorAll("td[data-event]")) {
    let line = null;
    try {
      line = eventLine(JSON.parse(cell.dataset.event), (id) => party[id] || "");
    } catch {
      continue;
    }
    if (!line || !line.text) continue;
    cell.title = cell.dataset.event;
    cell.textContent = line.who ? `${line.who}: ${line.text}` : line.text;
  }
}
renderEvents(document);
