// The adventure editor (/adventures/new, /adventures/{id}/edit): a plain
// textarea. As you type, after a pause, the source is checked by
// POST /api/adventures/validate and every problem is shown beside it and
// marked on its line in the gutter. Save creates or replaces the adventure;
// "Play it" saves, makes a table of it and opens the table. Text from the
// server is only ever set as textContent.

const $ = (id) => document.getElementById(id);
const root = $('editor');
const src = $('source');
const gutter = $('gutter');
const list = $('problems');
const status = $('status');
let id = root.dataset.adventureId || '';
let saved = id ? src.value : null; // the source as last saved
let seq = 0; // the latest check; older answers are dropped
let timer = 0;

function showError(msg) {
  const e = $('editor-error');
  e.textContent = msg;
  e.hidden = !msg;
}

// drawGutter numbers the lines and marks those with problems.
function drawGutter(bad) {
  const n = src.value.split('\n').length;
  const frag = document.createDocumentFragment();
  for (let i = 1; i <= n; i++) {
    const s = document.createElement('span');
    s.textContent = String(i);
    s.dataset.line = String(i);
    if (bad.has(i)) {
      s.className = 'bad';
      s.title = bad.get(i);
    }
    frag.appendChild(s);
  }
  gutter.replaceChildren(frag);
  gutter.scrollTop = src.scrollTop;
}

// goTo selects line n in the textarea.
function goTo(n) {
  const lines = src.value.split('\n');
  let start = 0;
  for (let i = 0; i < n - 1 && i < lines.length; i++) start += lines[i].length + 1;
  src.focus();
  src.setSelectionRange(start, start + (lines[n - 1] || '').length);
  const lh = parseFloat(getComputedStyle(src).lineHeight) || 18;
  src.scrollTop = Math.max(0, (n - 5) * lh);
}

function showProblems(problems) {
  const bad = new Map();
  const items = problems.map((p) => {
    bad.set(p.line, (bad.has(p.line) ? bad.get(p.line) + '\n' : '') + p.message);
    const li = document.createElement('li');
    li.dataset.line = String(p.line);
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'link line';
    b.textContent = p.line ? `Line ${p.line}` : 'The whole file';
    b.addEventListener('click', () => goTo(p.line));
    li.appendChild(b);
    if (p.path) {
      const path = document.createElement('span');
      path.className = 'path';
      path.textContent = ' ' + p.path;
      li.appendChild(path);
    }
    const m = document.createElement('div');
    m.className = 'message';
    m.textContent = p.message;
    li.appendChild(m);
    return li;
  });
  list.replaceChildren(...items);
  status.textContent = problems.length === 0 ? 'No problems: ready to play.' : `${problems.length} problem${problems.length === 1 ? '' : 's'}.`;
  status.className = problems.length === 0 ? 'ok' : 'muted';
  drawGutter(bad);
}

async function check() {
  const mine = ++seq;
  status.textContent = 'Checking…';
  try {
    const res = await fetch('/api/adventures/validate', { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: src.value });
    const j = await res.json();
    if (mine !== seq) return;
    if (!res.ok) {
      status.textContent = (j.error && j.error.message) || `Could not check (${res.status}).`;
      return;
    }
    showProblems(j.problems || []);
  } catch {
    if (mine === seq) status.textContent = 'Could not check: is the server reachable?';
  }
}

src.addEventListener('input', () => {
  drawGutter(new Map());
  clearTimeout(timer);
  timer = setTimeout(check, 400);
});
src.addEventListener('scroll', () => { gutter.scrollTop = src.scrollTop; });

async function api(method, path, body, type) {
  const res = await fetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': type }, body });
  let j = null;
  try { j = await res.json(); } catch { /* 204 */ }
  if (!res.ok) {
    if (j && j.error && j.error.problems) showProblems(j.error.problems);
    const err = new Error((j && j.error && j.error.message) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.code = j && j.error && j.error.code;
    throw err;
  }
  return j;
}

// save stores the source: a new adventure, or over this one when it is
// yours; someone else's is forked first.
async function save() {
  showError('');
  if (id && saved === src.value) return id;
  let e;
  if (!id) {
    e = await api('POST', '/api/adventures', src.value, 'application/yaml');
  } else {
    try {
      e = await api('PUT', `/api/adventures/${encodeURIComponent(id)}`, src.value, 'application/yaml');
    } catch (err) {
      // forbidden: built in, or someone else's (PROTOCOL.md "Adventures"):
      // saving makes the viewer's own copy.
      if (err.code !== 'forbidden') throw err;
      e = await api('POST', '/api/adventures', src.value, 'application/yaml');
    }
  }
  saved = src.value;
  if (e.id !== id) {
    id = e.id;
    root.dataset.adventureId = id;
    history.replaceState(null, '', `/adventures/${encodeURIComponent(id)}/edit`);
  }
  status.textContent = 'Saved.';
  return id;
}

function busy(btn, f) {
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try { await f(); } catch (err) { showError(err.message); } finally { btn.disabled = false; }
  });
}

busy($('save'), save);
busy($('play'), async () => {
  const adv = await save();
  const title = (src.value.match(/^name:\s*(.+)$/m) || [])[1] || adv;
  const t = await api('POST', '/api/tables', JSON.stringify({ name: title.replace(/^["']|["']$/g, '').slice(0, 64), adventure: adv }), 'application/json');
  location.assign(`/tables/${encodeURIComponent(t.id)}#seat-form`);
});
if ($('fork')) {
  busy($('fork'), async () => {
    const e = await api('POST', `/api/adventures/${encodeURIComponent(id)}/fork`);
    location.assign(`/adventures/${encodeURIComponent(e.id)}/edit`);
  });
}
if ($('hide')) {
  busy($('hide'), async () => {
    await api('DELETE', `/api/adventures/${encodeURIComponent(id)}`);
    location.assign('/adventures');
  });
}

drawGutter(new Map());
check();
