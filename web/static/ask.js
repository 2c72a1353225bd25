// The "Ask the data" page: posts the question to
// /api/admin/ask with Accept: text/event-stream and shows each step as it
// arrives — the SQL, the rows as a table and the chart —
// then the answer. Follow-ups carry the conversation id. Without this
// script the form posts to /admin/ask and the server renders the answer.
// Text from the database or the model is only ever set as textContent.

const MAX_ROWS = 100;

const form = document.getElementById("ask-form");
const log = document.getElementById("ask-log");
const box = document.getElementById("ask-question");
const conv = document.getElementById("ask-conversation");
const submit = document.getElementById("ask-submit");
const status = document.getElementById("ask-status");
const errorLine = document.getElementById("ask-error");

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function cell(v) {
  if (v === null || v === undefined) return "NULL";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function pre(cls, text) {
  const p = el("pre", cls);
  p.append(el("code", "", text));
  return p;
}

// columnLabel words a column as the server's columnLabel does.
function columnLabel(c) {
  const units = { _usd: " (USD)", _ms: " (ms)", _s: " (s)", _pct: " (%)" };
  for (const [suffix, unit] of Object.entries(units)) {
    if (c.endsWith(suffix) && c.length > suffix.length) return c.slice(0, -suffix.length).replaceAll("_", " ") + unit;
  }
  return c.replaceAll("_", " ");
}

function table(step) {
  const wrap = el("div", "ask-table-wrap");
  const t = el("table", "ask-rows");
  const head = el("tr");
  for (const c of step.columns) head.append(el("th", "", columnLabel(c)));
  const thead = el("thead");
  thead.append(head);
  t.append(thead);
  // The server's marker of each cut cell, by "row,column".
  const cuts = new Map((step.cut || []).map((c) => [`${c.row},${c.column}`, c.marker]));
  const body = el("tbody");
  (step.rows || []).slice(0, MAX_ROWS).forEach((row, i) => {
    const tr = el("tr");
    row.forEach((v, j) => {
      const td = el("td", "", cell(v));
      const marker = cuts.get(`${i},${j}`);
      if (marker) td.append(el("span", "ask-cut", marker));
      tr.append(td);
    });
    body.append(tr);
  });
  t.append(body);
  wrap.append(t);
  const n = (step.rows || []).length;
  let count = n === 1 ? "1 row" : `${n} rows`;
  if (n > MAX_ROWS) count += `, the first ${MAX_ROWS} shown`;
  if (step.rows_cut === "rows") count += " (cut at the row cap)";
  else if (step.rows_cut === "bytes") count += " (cut at the byte limit)";
  return [wrap, el("p", "muted ask-count", count)];
}

// stepItem renders one step as the server's askStep does.
function stepItem(step, li) {
  li = li || el("li");
  li.className = `ask-step ask-${step.kind}`;
  li.replaceChildren();
  // A chart's caption only repeats the title drawn in it (ask_view.go).
  if (step.description && !(step.chart && step.description === step.chart.title)) li.append(el("p", "ask-desc", step.description));
  if (step.sql) li.append(pre("ask-sql", step.sql));
  if (step.error) li.append(el("p", "ask-step-error", "Refused: " + step.error));
  if (step.columns && step.columns.length) li.append(...table(step));
  if (step.svg) {
    const img = el("img", "ask-chart");
    img.alt = step.chart.title || "chart";
    img.src = "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(step.svg)));
    li.append(img);
  }
  return li;
}

// events parses a text/event-stream body, calling on(name, data) per event.
async function events(body, on) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) on(name, JSON.parse(data));
    }
  }
}

function showError(msg) {
  errorLine.textContent = msg;
  errorLine.hidden = !msg;
}

async function ask(question) {
  const article = el("article", "ask-reply");
  article.append(el("h2", "ask-question", question));
  const steps = el("ol", "ask-steps");
  const answer = el("p", "ask-answer");
  article.append(steps, answer);
  log.append(article);
  let pending = null; // the li of a query that is running
  const res = await fetch("/api/admin/ask", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ question, conversation: conv.value || undefined }),
  });
  if (!res.ok) {
    article.remove();
    const body = await res.json().catch(() => null);
    throw new Error(body && body.error ? body.error.message : `The server answered ${res.status}.`);
  }
  await events(res.body, (name, data) => {
    switch (name) {
      case "sql":
        pending = stepItem(data);
        pending.classList.add("ask-running");
        steps.append(pending);
        status.textContent = "Running a query…";
        break;
      case "rows":
        steps.append(stepItem(data, pending || undefined));
        pending = null;
        status.textContent = "Thinking…";
        break;
      case "chart":
        steps.append(stepItem(data));
        status.textContent = "Thinking…";
        break;
      case "answer":
        answer.textContent = data.answer;
        if (data.note) article.append(el("p", "ask-note", data.note));
        else if (data.offline) article.append(el("p", "muted ask-offline", "Answered by the offline analyst (no model configured)."));
        conv.value = data.conversation;
        document.querySelector('label[for="ask-question"]').textContent = "Follow-up question";
        box.placeholder = box.dataset.followUpHint || "";
        if (!document.getElementById("ask-new")) {
          const a = el("a", "", "New conversation");
          a.id = "ask-new";
          a.href = "/admin/ask";
          submit.after(a);
        }
        history.replaceState(null, "", "/admin/ask?conversation=" + encodeURIComponent(data.conversation));
        break;
      case "error":
        throw new Error(data.error.message);
    }
  });
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const question = box.value.trim();
  if (!question) return;
  showError("");
  submit.disabled = true;
  status.textContent = "Thinking…";
  try {
    await ask(question);
    box.value = "";
  } catch (err) {
    showError(err.message);
  } finally {
    submit.disabled = false;
    status.textContent = "";
    box.focus();
  }
});
