// Tavern lobby: the name and new-table forms. The page itself is
// server-rendered; these forms call the JSON API, then navigate.

const $ = (id) => document.getElementById(id);

function showError(msg) {
  const e = $('lobby-error');
  e.textContent = msg;
  e.hidden = false;
}

async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  let j = null;
  try {
    j = await res.json();
  } catch { /* empty or not JSON */ }
  if (!res.ok) throw new Error((j && j.error && j.error.message) || `${res.status} ${res.statusText}`);
  return j;
}

const nameForm = $('name-form');
nameForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const btn = $('player-submit');
  btn.disabled = true;
  try {
    // The response sets the tavern_player cookie (HttpOnly).
    await post('/api/players', { name: $('player-name').value });
    location.reload();
  } catch (err) {
    showError(err.message);
    btn.disabled = false;
  }
});

const createForm = $('create-form');
createForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const btn = $('create-submit');
  btn.disabled = true;
  const body = {
    name: $('table-name').value,
    ruleset: $('table-ruleset').value,
    combat_mode: $('table-combat-mode').value,
    seats: Number($('table-seats').value),
    private: $('table-private').checked,
    npc_hp: $('table-npc-hp').value,
  };
  const adv = $('table-adventure');
  if (adv) body.adventure = adv.value;
  try {
    const t = await post('/api/tables', body);
    location.assign(`/tables/${encodeURIComponent(t.id)}#seat-form`);
  } catch (err) {
    showError(err.message);
    btn.disabled = false;
  }
});

// The table list stays live without a reload: every few seconds (while the
// page is visible) the seat, spectator and mode columns follow
// GET /api/tables; a new or closed table shows a reload hint.
const modeWord = (m) => (m === 'combat' ? 'fighting' : 'exploring');

async function pollTables() {
  if (document.hidden) return;
  const body = document.querySelector('#tables tbody');
  let list;
  try {
    const res = await fetch('/api/tables', { headers: { Accept: 'application/json' } });
    if (!res.ok) return;
    list = (await res.json()).tables || [];
  } catch {
    return;
  }
  const rows = new Map([...document.querySelectorAll('#tables tr[data-table-id]')].map((r) => [r.dataset.tableId, r]));
  let changed = !body ? list.length > 0 : list.length !== rows.size;
  for (const t of list) {
    const r = rows.get(t.id);
    if (!r) {
      changed = true;
      continue;
    }
    r.querySelector('.t-seats').textContent = `${t.seated}/${t.seats}`;
    r.querySelector('.t-spectators').textContent = String(t.spectators);
    const m = r.querySelector('.t-mode');
    if (m) m.textContent = modeWord(t.mode);
    const sit = r.querySelector('[data-action="sit"]');
    if (sit) sit.hidden = t.seats > 0 && t.seated >= t.seats;
  }
  const note = $('tables-changed');
  if (note) note.hidden = !changed;
}
setInterval(pollTables, 4000);
