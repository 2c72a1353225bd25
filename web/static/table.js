// Tavern table page: keeps the page live over the websocket of
// PROTOCOL.md (subprotocol tavern.v1).
//
// table.templ renders only the shell. The panels are drawn by panels.js
// from the JSON view alone: the snapshot the page ships, then each
// `state` frame the hub pushes after a change (?state=1). Events only add
// log lines (log.js) and the DM's hints. Whether the viewer may act comes
// from the server (the party entry's can_act and turn).
//
// Every piece of player or model text reaches the page as a text node
// (dom.js), never as HTML.

import { asList } from './eventline.js';
import { mount } from './dom.js';
import { Log } from './log.js';
import { dmTools, renderUndo } from './dmtools.js';
import * as panels from './panels.js';
import * as owner from './owner.js';

const page = document.getElementById('table-page');
const tableId = page.dataset.tableId;
// invite is the code the page was opened with (a private table): every
// request of the page carries it on.
const invite = page.dataset.invite || '';
const inviteQuery = invite ? `&invite=${encodeURIComponent(invite)}` : '';
let role = page.dataset.role; // "player" or "spectator"
let seat = page.dataset.seat || '';

// state is the last snapshot or state frame, as the server sent it.
let state = JSON.parse(document.getElementById('snapshot-data').textContent);
let lastSeq = Number(page.dataset.seq) || 0;

const $ = (id) => document.getElementById(id);
const text = (node, s) => { if (node) node.textContent = s; };
const viewer = () => (role === 'player' ? seat : '');

const characterName = (id) => {
  const c = (state.party || []).find((p) => p.id === id);
  return c ? c.name : '';
};
// Narration lines carry the thumbs up/down and edit buttons; style.css shows them
// to seated players (.seated) and the owner (.is-owner).
page.classList.toggle('seated', role === 'player');
let isOwner = false; // told by dmtools.js once the server says
const noteViewer = () => ({ playerId: page.dataset.playerId || '', owner: isOwner });
// A free fight has no order, and its log does not show one: no
// initiative rolls, and its start without initiative numbers.
function shown(ev) {
  if (!state.table || state.table.combat_mode !== 'narrative') return ev;
  if (ev.kind === 'dice' && ev.data && ev.data.purpose === 'initiative') return null;
  if (ev.kind === 'combat_started') return { ...ev, data: { ...ev.data, combat_mode: 'free' } };
  return ev;
}
const storyLog = new Log($('log'), characterName, { tools: true });
const log = {
  reset: (evs) => storyLog.reset(evs.map(shown).filter(Boolean)),
  append: (ev) => { const s = shown(ev); if (s) storyLog.append(s); },
  prepend: (evs) => storyLog.prepend(evs.map(shown).filter(Boolean)),
  delta: (f) => storyLog.delta(f),
};

// ---------- drawing the panels ----------

// Each panel's container, and its renderer in panels.js: a function of
// the state and the viewer's seat.
const boxes = [
  ['combat-panel', panels.combatPanel],
  ['party', panels.party],
  ['sheet', panels.sheet],
  ['location', panels.location],
  ['quests', panels.quests],
  ['shop', panels.shops],
  ['hints', (st, seat) => [...panels.fightChips(st, seat, target), ...panels.hints(hints.length || !afterFight ? hints : panels.afterFight(st, seat))]],
  ['notes', (s) => panels.notes(s, noteViewer())],
  ['owner-seats', (s) => owner.seats(s, page.dataset.playerId)],
];

let hints = [];
// afterFight: a fight ended and nobody has acted since, so the DM's
// suggestions for after a fight stand in for empty hints.
let afterFight = false;
// target is the initiative entry the viewer tapped to aim the fight chips.
let target = '';
let sending = false; // an act is in flight (sent, no ack or error yet)
let connected = false;
let everConnected = false;

function renderAction() {
  const a = panels.action(state, viewer(), { connected, everConnected, sending });
  const box = $('action-text');
  const send = $('action-send');
  if (box && send) {
    box.disabled = !a.enabled;
    send.disabled = !a.enabled;
    text($('turn-hint'), a.hint);
  }
  page.classList.toggle('my-turn', a.marked);
  signalTurn(a.myTurn);
}

function renderAll() {
  const b = panels.badges(state);
  text($('mode'), b.modeText);
  $('mode').dataset.mode = b.mode;
  page.dataset.mode = b.mode;
  text($('spectators'), b.spectators);
  const bar = panels.combatBar(state, viewer());
  const barEl = $('combat-bar');
  barEl.hidden = bar.hidden;
  barEl.classList.toggle('mine', bar.mine);
  barEl.replaceChildren(...bar.children.map((v) => mount(v)));
  for (const [id, render] of boxes) {
    const box = $(id);
    if (box) box.replaceChildren(...render(state, viewer(), target).map((v) => mount(v)));
  }
  const hintBox = $('hints');
  if (hintBox) hintBox.hidden = !hintBox.children.length;
  const shopBox = $('shop');
  if (shopBox) shopBox.hidden = !(state.shops || []).length;
  const paused = $('paused-banner');
  if (paused) paused.hidden = !state.paused;
  const unsaved = $('unsaved-banner');
  if (unsaved) {
    text(unsaved, state.cannot_save || '');
    unsaved.hidden = !state.cannot_save;
  }
  owner.render(state);
  renderUndo(state);
  renderAction();
}

// Any [data-fill] button (a hint, an exit, an NPC, an item, an item's
// equip/use/drop) puts its words in the action box, ready to send.
page.addEventListener('click', (e) => {
  // Tapping a combatant (a target chip, an entry of the tracker) aims the
  // fight chips at it.
  const aim = e.target.closest('[data-target], #initiative li[data-entry]');
  if (aim) {
    target = aim.dataset.target || aim.dataset.entry;
    renderAll();
    return;
  }
  const b = e.target.closest('[data-fill]');
  const box = $('action-text');
  if (!b || !box) return;
  box.value = b.dataset.fill;
  box.focus();
});

// The turn timer's countdown ticks in the action hint.
setInterval(() => { if (state.combat && state.combat.deadline) renderAction(); }, 1000);

// ---------- whose turn: the title, a sound, a notification ----------

const baseTitle = document.title;
let wasMyTurn = false;
const soundOn = () => localStorage.getItem('tavern.turnSound') === '1';

function beep() {
  try {
    const ctx = new AudioContext();
    const o = ctx.createOscillator();
    const g = ctx.createGain();
    o.frequency.value = 660;
    g.gain.value = 0.08;
    o.connect(g).connect(ctx.destination);
    o.start();
    o.stop(ctx.currentTime + 0.18);
  } catch { /* no audio */ }
}

// signalTurn marks the moment it becomes your turn outside the action box:
// the page title, a short sound if you turned it on, a notification if the
// browser allows them and the page is not in front. Refusals shown before
// no longer apply.
function signalTurn(mine) {
  document.title = mine ? `\u25b6 Your turn \u2014 ${baseTitle}` : baseTitle;
  if (mine && !wasMyTurn) {
    $('error').hidden = true;
    if (soundOn()) beep();
    if (document.hidden && 'Notification' in window && Notification.permission === 'granted') {
      try { new Notification('Your turn', { body: state.table ? state.table.name : '' }); } catch { /* not allowed here */ }
    }
  }
  wasMyTurn = mine;
}

const soundBtn = $('turn-sound');
if (soundBtn) {
  const show = () => {
    soundBtn.setAttribute('aria-pressed', soundOn() ? 'true' : 'false');
    text(soundBtn, soundOn() ? 'Turn alert: on' : 'Turn alert: off');
  };
  soundBtn.addEventListener('click', () => {
    localStorage.setItem('tavern.turnSound', soundOn() ? '0' : '1');
    if (soundOn()) {
      beep();
      if ('Notification' in window && Notification.permission === 'default') Notification.requestPermission().catch(() => {});
    }
    show();
  });
  show();
}

// ---------- frames ----------

// lastHints are the hints of the last narration, unless an action came
// after it.
function lastHints(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev.kind === 'action') return [];
    if (ev.kind === 'narration') return asList((ev.data || {}).hints);
  }
  return [];
}

// endedSinceAction tells whether a fight ended after the last action.
function endedSinceAction(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i].kind === 'action') return false;
    if (events[i].kind === 'combat_ended') return true;
  }
  return false;
}

function onEvent(ev) {
  if (typeof ev.seq !== 'number' || ev.seq <= lastSeq) return; // replayed twice
  if (ev.seq > lastSeq + 1) {
    // A gap means frames were lost: resume from what we have.
    resync();
    return;
  }
  lastSeq = ev.seq;
  if (ev.kind === 'action') { hints = []; afterFight = false; }
  if (ev.kind === 'narration') hints = asList((ev.data || {}).hints);
  if (ev.kind === 'combat_ended') { afterFight = true; target = ''; }
  log.append(ev);
  // The panels change with the state frame that follows every event but
  // chat; only the hints come from the event.
  if (ev.kind === 'action' || ev.kind === 'narration' || ev.kind === 'combat_ended') renderAll();
}

// onState takes a pushed state: the snapshot's fields without recent.
function onState(f) {
  if (typeof f.seq !== 'number' || f.seq < lastSeq) return; // older than the log
  state = f;
  renderAll();
}

function onSnapshot(snap) {
  state = snap;
  for (const ev of snap.recent || []) {
    if (ev.seq > lastSeq) log.append(ev);
  }
  lastSeq = Math.max(lastSeq, snap.seq || 0);
  renderAll();
}

// ---------- the websocket ----------

let ws = null;
let attempts = 0;
let retryTimer = 0;
// done is set once the server has said this page is over (a closed
// table): it stops reconnecting.
let done = false;
const unacked = new Map(); // client id -> act frame, resent after a reconnect

function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function setConn(s, label) {
  const c = $('conn');
  c.dataset.state = s;
  text(c, label);
}

// banner shows (msg) or hides ('') the connection banner above the log.
function banner(msg) {
  const b = $('conn-banner');
  if (!b) return;
  text(b, msg);
  b.hidden = !msg;
}

// Why the server closed a seat's socket with 4003 (PROTOCOL.md "Table
// owners"), in words for the page.
function freedWhy(reason) {
  if (reason === 'removed by the table\'s owner') return 'The table\'s owner removed you from your seat. You are watching now.';
  if (reason === 'removed by the operator') return 'The operator freed your seat. You are watching now.';
  if (reason === 'banned from this table') return 'You are banned from this table.';
  if (reason === 'banned by the operator') return 'The operator banned you from this server.';
  if (reason === 'erased by the operator') return 'The operator erased your account.';
  return 'Your seat was freed. You are watching now.';
}

// seatFreed: the server took the seat away. The page reloads as a
// spectator's, saying why; where the viewer may no longer see the table
// (a private one, a ban) it stays, says why and goes quiet.
async function seatFreed(why) {
  done = true;
  clearTimeout(retryTimer);
  const target = `/tables/${encodeURIComponent(tableId)}${invite ? `?invite=${encodeURIComponent(invite)}` : ''}`;
  let visible = false;
  try {
    visible = (await fetch(`/api/tables/${encodeURIComponent(tableId)}?${inviteQuery.slice(1)}`)).ok;
  } catch { /* unreachable: say why here */ }
  if (visible) {
    try {
      sessionStorage.setItem('tavern-notice', why);
      location.replace(target);
      return;
    } catch { /* storage refused: say why here */ }
  }
  role = 'spectator';
  seat = '';
  setConn('closed', 'not seated');
  banner('');
  const n = $('notice');
  text(n, why);
  n.hidden = false;
  for (const id of ['action-form', 'chat-form', 'seat-form']) {
    const f = $(id);
    if (f) f.hidden = true;
  }
  renderAll();
}

// tableClosed: the table is closed; its story stays on the page.
function tableClosed() {
  done = true;
  clearTimeout(retryTimer);
  setConn('closed', 'closed');
  banner('This table was closed. Its story stays here to read.');
  for (const id of ['action-form', 'chat-form', 'seat-form']) {
    const f = $(id);
    if (f) f.hidden = true;
  }
}

// checkSeat asks the server, after a join that failed, whether this page
// still has its seat: only the server's answer gives it up (404: the table
// is gone; no longer in the party: freed). A server that does not answer
// is down, and the page keeps trying.
async function checkSeat() {
  let res;
  try {
    res = await fetch(`/api/tables/${encodeURIComponent(tableId)}?${inviteQuery.slice(1)}`, { headers: { Accept: 'application/json' } });
  } catch {
    return; // unreachable: keep trying
  }
  if (done) return;
  if (res.status === 404) {
    tableClosed();
    return;
  }
  if (res.status === 403) {
    seatFreed(freedWhy('banned from this table'));
    return;
  }
  if (!res.ok) return;
  let snap;
  try {
    snap = await res.json();
  } catch {
    return;
  }
  if (snap.table && snap.table.status === 'closed') {
    tableClosed();
    return;
  }
  const mine = (snap.party || []).some((c) => c.seat === seat && c.player_id === page.dataset.playerId);
  if (!mine) seatFreed(freedWhy(''));
}

function connect() {
  clearTimeout(retryTimer);
  if (done) return;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${proto}//${location.host}/ws/tables/${encodeURIComponent(tableId)}?role=${role}&since=${lastSeq}&batch=1&state=1${inviteQuery}`;
  setConn('connecting', 'connecting…');
  let welcomed = false;
  const sock = new WebSocket(url, 'tavern.v1');
  ws = sock;
  // A message is one frame or (?batch=1) an array of frames, in order.
  const onFrame = (f) => {
    switch (f.type) {
      case 'welcome':
        welcomed = true;
        connected = true;
        everConnected = true;
        attempts = 0;
        if (f.you && f.you.role === 'player' && f.you.seat) seat = f.you.seat;
        setConn('open', 'live');
        banner('');
        for (const frame of unacked.values()) sock.send(JSON.stringify(frame));
        renderAction();
        break;
      case 'state':
        onState(f);
        break;
      case 'snapshot':
        onSnapshot(f);
        break;
      case 'event':
        onEvent(f);
        break;
      case 'narration_delta':
        log.delta(f);
        break;
      case 'narration_withdrawn':
        log.withdraw(f);
        break;
      case 'ack':
        if (unacked.delete(f.id)) sending = false;
        dm.acked(f.id);
        renderAction();
        break;
      case 'error': {
        const refused = f.id && unacked.get(f.id);
        if (refused) {
          unacked.delete(f.id);
          sending = false;
          // A refused act (a paused table…) goes back in the box, untouched.
          const box = $('action-text');
          if (refused.type === 'act' && box && !box.value) box.value = refused.text;
        }
        showError(f.message || f.code);
        renderAction();
        break;
      }
      case 'pong':
        break;
    }
  };
  sock.onmessage = (m) => {
    let msg;
    try {
      msg = JSON.parse(m.data);
    } catch {
      return;
    }
    for (const f of Array.isArray(msg) ? msg : [msg]) {
      if (ws !== sock) return; // a frame asked for a resync
      onFrame(f);
    }
  };
  sock.onclose = (e) => {
    if (ws !== sock) return;
    connected = false;
    ws = null;
    if (done) return;
    // A seat is given up only when the server says so (PROTOCOL.md
    // "Table owners"): 4003 with its reason, or a closed table. Anything
    // else is retried, as a player, with backoff, for as long as the page
    // is open: the seat is kept.
    if (e.code === 4003) {
      seatFreed(freedWhy(e.reason));
      return;
    }
    if (e.code === 1000 && /closed/.test(e.reason)) {
      tableClosed();
      return;
    }
    attempts++;
    const delay = Math.min(15000, 500 * 2 ** Math.min(attempts, 5)) * (0.75 + Math.random() / 2);
    setConn('closed', e.code === 1001 ? 'server restarting…' : 'reconnecting…');
    const kept = role === 'player' ? ' Your seat is kept.' : '';
    banner((e.code === 1001 ? 'The server is restarting; reconnecting…' : 'Reconnecting…') + kept);
    renderAction();
    if (!welcomed && role === 'player') checkSeat();
    retryTimer = setTimeout(connect, delay);
  };
}

function resync() {
  if (ws) {
    const old = ws;
    old.close(4000, 'resync');
    // onclose schedules the reconnect with since=lastSeq.
  }
}

function send(frame) {
  if (!ws || ws.readyState !== WebSocket.OPEN) {
    showError('Not connected; try again in a moment.');
    return false;
  }
  ws.send(JSON.stringify(frame));
  return true;
}

let errorTimer = 0;
function showError(msg) {
  const e = $('error');
  text(e, msg);
  e.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => { e.hidden = true; }, 8000);
}

// ---------- forms ----------

const actionForm = $('action-form');
if (actionForm) {
  actionForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const box = $('action-text');
    const t = box.value.trim();
    if (!t || box.disabled) return;
    const frame = { type: 'act', id: newId(), text: t };
    if (send(frame)) {
      unacked.set(frame.id, frame);
      sending = true;
      box.value = '';
      renderAction();
    }
  });
  $('action-text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      actionForm.requestSubmit();
    }
  });
}

const chatForm = $('chat-form');
if (chatForm) {
  chatForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $('chat-text');
    const t = input.value.trim();
    if (t && send({ type: 'say', id: newId(), text: t })) input.value = '';
  });
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try {
      const j = await res.json();
      if (j.error && j.error.message) msg = j.error.message;
    } catch { /* not JSON */ }
    throw new Error(msg);
  }
  return res.status === 204 ? null : res.json();
}

const seatForm = $('seat-form');
if (seatForm) {
  const classPick = $('seat-class'), classAbout = $('seat-class-about');
  if (classAbout) {
    classPick.addEventListener('change', () => {
      classAbout.textContent = classPick.selectedOptions[0]?.dataset.summary || '';
    });
  }
  seatForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const btn = $('seat-submit');
    btn.disabled = true;
    try {
      const who = $('seat-player-name');
      if (who) await api('POST', '/api/players', { name: who.value });
      await api('POST', `/api/tables/${encodeURIComponent(tableId)}/seats`, {
        character: { name: $('seat-name').value, class: $('seat-class').value, backstory: $('seat-backstory').value },
        invite: invite || undefined,
      });
      location.replace(location.pathname + (invite ? `?invite=${encodeURIComponent(invite)}` : '')); // reload as a seated player
    } catch (err) {
      showError(err.message);
      btn.disabled = false;
    }
  });
}

const leaveBtn = $('leave');
if (leaveBtn) {
  leaveBtn.addEventListener('click', async () => {
    if (!confirm('Leave your seat? Your character leaves the party.')) return;
    try {
      await api('DELETE', `/api/tables/${encodeURIComponent(tableId)}/seats/me`);
      location.replace(location.pathname + (invite ? `?invite=${encodeURIComponent(invite)}` : ''));
    } catch (err) {
      showError(err.message);
    }
  });
}

// Keep the connection honest while idle: a ping every 25 s.
setInterval(() => {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'ping', id: newId() }));
}, 25000);

window.addEventListener('pagehide', () => {
  if (ws) {
    const old = ws;
    ws = null;
    old.close(1000, 'bye');
  }
});

window.addEventListener('pageshow', (e) => {
  if (e.persisted && !ws) connect(); // back from the bfcache
});

// ---------- load earlier ----------

const earlierBtn = $('load-earlier');
let firstSeq = (state.recent && state.recent.length) ? state.recent[0].seq : 0;

function renderEarlier() {
  if (earlierBtn) earlierBtn.hidden = !(firstSeq > 1);
}

// loadEarlier pages back through GET /events: the 50 events before the
// first one the log shows, put on top without moving what you read.
async function loadEarlier() {
  if (!(firstSeq > 1)) return;
  const since = Math.max(0, firstSeq - 51);
  earlierBtn.disabled = true;
  try {
    const res = await fetch(`/api/tables/${encodeURIComponent(tableId)}/events?since=${since}&limit=${firstSeq - 1 - since}${inviteQuery}`);
    if (!res.ok) throw new Error(`${res.status}`);
    const pg = await res.json();
    const evs = (pg.events || []).filter((ev) => ev.seq < firstSeq);
    log.prepend(evs);
    firstSeq = evs.length ? evs[0].seq : 1;
  } catch (err) {
    showError('Could not load earlier events: ' + err.message);
  } finally {
    earlierBtn.disabled = false;
    renderEarlier();
  }
}
if (earlierBtn) earlierBtn.addEventListener('click', loadEarlier);

const dm = dmTools({
  tableId, api, send, newId, showError,
  role: () => role,
  setOwner: (v) => { isOwner = v; renderAll(); },
});
// What the page before this one had to say (a freed seat).
try {
  const notice = sessionStorage.getItem('tavern-notice');
  if (notice) {
    sessionStorage.removeItem('tavern-notice');
    const n = $('notice');
    if (n) {
      text(n, notice);
      n.hidden = false;
    }
  }
} catch { /* no storage */ }
owner.wire(tableId, api, showError, () => state);

hints = lastHints(state.recent || []);
afterFight = endedSinceAction(state.recent || []);
renderEarlier();
log.reset(state.recent || []);
renderAll();
connect();
