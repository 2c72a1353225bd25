// The table owner's controls on the table page (PROTOCOL.md "Table
// owners"): the invite link, private, NPC health, pause, and each seat's
// kick and ban. table.templ renders the card only for the owner; the seat
// list is drawn here from the state, like the other panels.

import { h } from './dom.js';

const $ = (id) => document.getElementById(id);

// seats lists the seated players but the owner, each with kick and ban.
export function seats(s, ownerId) {
  const rows = (s.party || []).filter((c) => c.player_id !== ownerId).map((c) => h('li', { 'data-seat': c.seat },
    h('span', { class: 'o-name' }, `${c.name} (${c.player || 'seat ' + c.seat})`),
    h('button', { type: 'button', class: 'link', 'data-kick': c.seat }, 'Remove'),
    h('button', { type: 'button', class: 'link', 'data-ban': c.player_id }, 'Ban')));
  return rows.length ? rows : [h('li', { class: 'muted' }, 'nobody else is seated')];
}

// render follows the state: the pause button's word and the settings.
export function render(s) {
  const pause = $('owner-pause');
  if (!pause) return;
  pause.textContent = s.paused ? 'Resume the table' : 'Pause the table';
  pause.dataset.paused = s.paused ? '1' : '';
  const t = s.table || {};
  const priv = $('owner-private');
  if (priv && document.activeElement !== priv) priv.checked = !!t.private;
  const hp = $('owner-npc-hp');
  if (hp && document.activeElement !== hp) hp.value = t.npc_hp || 'exact';
}

// wire makes the owner's card work; api(method, path, body) calls the
// JSON API, showError says what went wrong, state() is the last state.
export function wire(tableId, api, showError, state) {
  const card = $('owner-panel');
  if (!card) return;
  // Folded on a phone, where it sits above the story (style.css).
  if (window.matchMedia('(max-width: 860px)').matches) card.open = false;
  const base = `/api/tables/${encodeURIComponent(tableId)}`;
  const run = async (f) => {
    try {
      await f();
    } catch (err) {
      showError(err.message);
    }
  };
  $('owner-invite').addEventListener('click', () => run(async () => {
    const inv = await api('POST', `${base}/invite`);
    const out = $('owner-invite-url');
    out.value = new URL(inv.url, location.href).href;
    out.hidden = false;
    out.select();
  }));
  $('owner-private').addEventListener('change', (e) => run(() => api('PATCH', base, { private: e.target.checked })));
  $('owner-npc-hp').addEventListener('change', (e) => run(() => api('PATCH', base, { npc_hp: e.target.value })));
  $('owner-pause').addEventListener('click', (e) => run(() => api('POST', `${base}/${e.target.dataset.paused ? 'resume' : 'pause'}`)));
  card.addEventListener('click', (e) => {
    const kick = e.target.closest('[data-kick]');
    const ban = e.target.closest('[data-ban]');
    if (kick && confirm('Remove this player from their seat?')) {
      run(() => api('DELETE', `${base}/seats/${encodeURIComponent(kick.dataset.kick)}`));
    }
    if (ban && confirm('Ban this player from the table? They can no longer sit or watch.')) {
      run(() => api('POST', `${base}/bans`, { player_id: ban.dataset.ban }));
    }
  });
  render(state());
}
