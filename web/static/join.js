// Tavern's join page (/join/<code>): one form that picks a name when the
// visitor has none, then sits with a new character or watches. A private
// table is seen through the invite code, which every request carries.

const $ = (id) => document.getElementById(id);
const page = $('join-page');
const tableId = page.dataset.tableId;
const invite = page.dataset.invite;

function showError(msg) {
  const e = $('join-error');
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

const classPick = $('join-class');
if (classPick && $('join-class-about')) {
  classPick.addEventListener('change', () => {
    $('join-class-about').textContent = classPick.selectedOptions[0]?.dataset.summary || '';
  });
}

const form = $('join-form');
form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const watch = e.submitter && e.submitter.value === 'watch';
  for (const b of form.querySelectorAll('button')) b.disabled = true;
  const table = `/tables/${encodeURIComponent(tableId)}`;
  try {
    const player = $('join-player');
    // A watcher needs no name; a player does.
    if (player && !player.disabled && (player.value.trim() || !watch)) {
      if (!player.value.trim()) throw new Error('Pick a name first.');
      await post('/api/players', { name: player.value });
      player.disabled = true; // a second try must not make a second player
    }
    if (watch) {
      location.assign(`${table}?watch=1&invite=${encodeURIComponent(invite)}`);
      return;
    }
    const name = $('join-character').value;
    if (!name.trim()) throw new Error('Name your character, or just watch.');
    await post(`/api/tables/${encodeURIComponent(tableId)}/seats`, {
      character: { name, class: $('join-class').value, backstory: $('join-backstory').value },
      invite,
    });
    // The page keeps the code: should the seat be freed, the invited may
    // still watch.
    location.assign(`${table}?invite=${encodeURIComponent(invite)}`);
  } catch (err) {
    showError(err.message);
    for (const b of form.querySelectorAll('button')) b.disabled = false;
  }
});
