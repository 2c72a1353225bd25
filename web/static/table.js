// Tavern table page: keeps the server-rendered page live over the
// websocket of PROTOCOL.md (subprotocol tavern.v1).
//
// Every piece of player or model text is put in the page with textContent
// (through el() and text()), never as HTML. The markup built here mirrors
// table.templ: same ids, classes and data attributes. The log is the one
// part only this script renders: the page ships its recent events in the
// snapshot JSON, and eventline.js reads them and the live ones alike.

import { asList, eventLine } from './eventline.js';

const page = document.getElementById('table-page');
const tableId = page.dataset.tableId;
let role = page.dataset.role; // "player" or "spectator"
let seat = page.dataset.seat || '';

// state is the last snapshot, updated in place by events.
let state = JSON.parse(document.getElementById('snapshot-data').textContent);
state.deadline = state.combat && state.combat.deadline ? Date.parse(state.combat.deadline) : 0;
let lastSeq = Number(page.dataset.seq) || 0;

const $ = (id) => document.getElementById(id);
const logEl = $('log');

// ---------- DOM helpers (text only) ----------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function text(node, s) {
  if (node) node.textContent = s;
}

// ---------- formatting (mirrors pages.go) ----------

const hpText = (hp, max) => `${hp}/${max}`;

function characterName(id) {
  const c = (state.party || []).find((p) => p.id === id);
  return c ? c.name : '';
}

function logItem(ev) {
  const l = eventLine(ev, characterName);
  if (!l) return null;
  const li = el('li', { class: `ev ev-${ev.kind}${l.outcome ? ' outcome-' + l.outcome : ''}`, 'data-seq': ev.seq });
  if (l.who) {
    li.append(el('strong', { class: 'who' }, l.who), el('span', { class: 'text' }, ': ' + l.text));
  } else {
    li.append(el('span', { class: 'text' }, l.text));
  }
  return li;
}

// ---------- rendering the panels ----------

function me() {
  if (role !== 'player' || !seat) return null;
  return (state.party || []).find((c) => c.seat === seat) || null;
}

function activeEntry() {
  const cb = state.combat;
  if (!cb || !cb.initiative || cb.index < 0 || cb.index >= cb.initiative.length) return null;
  return cb.initiative[cb.index];
}

function isDown(c) {
  const st = c.statuses || [];
  return c.hp <= 0 || st.includes('dead') || st.includes('unconscious');
}

// canAct mirrors pages.go canAct; the hub enforces the same rules.
function canAct() {
  const c = me();
  if (!c) return [false, ''];
  if (isDown(c)) return [false, 'You are down and cannot act.'];
  if (state.busy) return [false, 'The DM is resolving a turn…'];
  if (state.mode === 'combat' && state.table.combat_mode !== 'narrative' && state.combat) {
    const act = activeEntry();
    const left = state.deadline ? Math.max(0, Math.round((state.deadline - Date.now()) / 1000)) : -1;
    const clock = left >= 0 && act && act.kind === 'pc' ? ` (${left}s left)` : '';
    if (act && act.id === 'pc:' + seat) return [true, 'Your turn! What do you do?' + clock];
    return [false, act ? `Waiting for ${act.name}…${clock}` : 'Waiting…'];
  }
  return [true, 'What do you do?'];
}

let sending = false; // an act is in flight (sent, no ack or error yet)

function renderAction() {
  const box = $('action-text');
  const send = $('action-send');
  if (!box || !send) return;
  const [ok, hint] = canAct();
  const enabled = ok && !sending && connected;
  box.disabled = !enabled;
  send.disabled = !enabled;
  text($('turn-hint'), connected ? hint : everConnected ? 'Reconnecting…' : 'Connecting…');
  page.classList.toggle('my-turn', ok && state.mode === 'combat');
  signalTurn(isMyTurn());
}

// ---------- whose turn: the title, a sound, a notification ----------

const baseTitle = document.title;
let wasMyTurn = false;

function isMyTurn() {
  if (!seat || role !== 'player' || state.mode !== 'combat' || !state.combat || freeCombat()) return false;
  const act = activeEntry();
  return !!act && act.id === 'pc:' + seat;
}

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
// browser allows them and the page is not in front.
function signalTurn(mine) {
  document.title = mine ? `\u25b6 Your turn \u2014 ${baseTitle}` : baseTitle;
  if (mine && !wasMyTurn) {
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

// freeCombat: the table's combat style is free (combat_mode "narrative"):
// no initiative turns, so no order and no active marker.
const freeCombat = () => !!state.table && state.table.combat_mode === 'narrative';

function renderMode() {
  const m = $('mode');
  const mode = state.mode || 'narrative';
  text(m, mode === 'combat' ? 'fighting' : 'exploring');
  m.dataset.mode = mode;
  page.dataset.mode = mode;
  const n = (state.table && state.table.spectators) || 0;
  text($('spectators'), `${n} watching`);
}

// renderCombatBar fills the compact combat bar (shown on small screens
// while a fight runs): the round, whose turn, your HP.
function renderCombatBar() {
  const bar = $('combat-bar');
  if (!bar) return;
  const cb = state.combat;
  bar.hidden = !(cb && state.mode === 'combat');
  if (bar.hidden) return;
  text($('cb-round'), String(cb.round));
  const act = activeEntry();
  let turn = 'Free combat: act any time';
  if (!freeCombat()) turn = act ? (isMyTurn() ? 'Your turn!' : `${act.name}'s turn`) : '';
  text($('cb-turn'), turn);
  bar.classList.toggle('mine', isMyTurn());
  const c = me();
  text($('cb-hp'), c ? `${c.name} ${hpText(c.hp, c.max_hp)} HP` : '');
}

const isOut = (st) => (st || []).some((s) => s === 'dead' || s === 'unconscious' || s === 'fled');

function renderInitiative() {
  const cb = state.combat;
  text($('round'), cb ? String(cb.round) : '–');
  const ol = $('initiative');
  const act = activeEntry();
  const items = [];
  const free = freeCombat();
  ol.classList.toggle('free', free);
  for (const e of (cb && cb.initiative) || []) {
    if (free && e.kind === 'bookend') continue;
    const active = !free && act && act.id === e.id;
    const li = el('li', {
      'data-entry': e.id,
      class: `entry kind-${e.kind}${active ? ' active' : ''}${isOut(e.statuses) ? ' out' : ''}`,
      'aria-current': active ? 'true' : null,
    }, el('span', { class: 'e-name' }, e.name));
    if (!free && e.initiative !== undefined && e.initiative !== null) li.append(el('span', { class: 'e-init', title: 'initiative' }, String(e.initiative)));
    if (e.hp !== undefined && e.hp !== null && e.max_hp !== undefined && e.max_hp !== null) li.append(el('span', { class: 'e-hp' }, hpText(e.hp, e.max_hp) + ' HP'));
    if (e.statuses && e.statuses.length) li.append(el('span', { class: 'e-status' }, e.statuses.join(', ')));
    items.push(li);
  }
  ol.replaceChildren(...items);
  $('no-combat').hidden = !!cb;
}

function hpMeter(hp, max) {
  return el('meter', {
    class: 'hp', min: 0, max: Math.max(max, 1), low: Math.floor(max / 3) + 1, high: Math.floor((max * 2) / 3), optimum: max, value: hp,
  }, hpText(hp, max));
}

function renderParty() {
  const online = new Set(state.online || []);
  const items = (state.party || []).map((c) => {
    c = { ...c, online: online.has(c.seat) };
    const li = el('li', { 'data-character': c.id, 'data-seat': c.seat },
      el('div', { class: 'row' },
        el('span', { class: `c-online${c.online ? ' on' : ''}`, title: c.online ? 'online' : 'not connected', 'aria-label': c.online ? 'online' : 'not connected' }, c.online ? '\u25cf' : '\u25cb'),
        el('span', { class: 'c-name' }, c.name),
        el('span', { class: 'c-class' }, `${c.class} ${c.level}`),
        el('span', { class: 'c-hp' }, hpText(c.hp, c.max_hp))),
      hpMeter(c.hp, c.max_hp));
    if (c.player || (c.statuses && c.statuses.length)) {
      const sub = el('div', { class: 'c-sub muted' });
      if (c.player) sub.append(el('span', { class: 'c-player' }, c.player));
      if (c.statuses && c.statuses.length) sub.append(el('span', { class: 'c-status' }, c.statuses.join(', ')));
      li.append(sub);
    }
    return li;
  });
  $('party').replaceChildren(...items);
}

function renderSheet() {
  const box = $('sheet');
  const c = me();
  if (!box || !c) return;
  const eq = c.equipped || {};
  const st = c.stats || {};
  const row = (label, field, value) => [el('dt', null, label), el('dd', { 'data-field': field }, value)];
  const defence = c.ac ? `AC ${c.ac}` : `absorbs ${c.absorption || 0} damage`;
  const dl = el('dl', { class: 'sheet' },
    ...row('Class', 'class', c.class),
    ...row('Level', 'level', String(c.level)),
    ...row('XP', 'xp', c.xp_next ? `${c.xp} / ${c.xp_next} (level ${c.level + 1})` : String(c.xp)),
    ...row('HP', 'hp', hpText(c.hp, c.max_hp)),
    ...row('Gold', 'gold', String(c.gold)),
    ...row('Weapon', 'weapon', (eq.weapon && eq.weapon.name) || ''),
    ...row('Armour', 'armour', (eq.armour && eq.armour.name) || ''),
    ...row('Defence', 'defence', defence),
    ...row('Stats', 'stats', `STR ${st.str} · AGI ${st.agi} · CON ${st.con} · INT ${st.int} · WIS ${st.wis} · CHA ${st.cha}`),
    ...(c.statuses && c.statuses.length ? row('Status', 'statuses', c.statuses.join(', ')) : []));
  const inv = (c.inventory || []).map((it) => {
    const li = el('li', { 'data-item': it.id }, el('span', { class: 'i-name' }, it.name));
    for (const b of it.buffs || []) li.append(el('span', { class: 'tag buff', title: 'buff' }, '+ ' + b));
    for (const f of it.flaws || []) li.append(el('span', { class: 'tag flaw', title: 'flaw' }, '\u2212 ' + f));
    if (it.equipped) li.append(el('span', { class: 'tag follow' }, 'equipped'));
    const acts = el('span', { class: 'i-acts' });
    const verbs = [];
    if ((it.category === 'weapon' || it.category === 'armour') && !it.equipped) verbs.push('equip');
    if (it.category === 'consumable') verbs.push('use');
    verbs.push('drop');
    for (const verb of verbs) {
      acts.append(el('button', { type: 'button', class: 'chip small', 'data-fill': `${verb} ${it.name}` }, verb));
    }
    li.append(acts);
    return li;
  });
  if (!inv.length) inv.push(el('li', { class: 'muted' }, 'nothing'));
  box.replaceChildren(el('h2', null, c.name), dl, el('h3', null, 'Inventory'), el('ul', { class: 'inventory', 'data-field': 'inventory' }, ...inv));
}

function renderLocation() {
  const l = state.location || {};
  const fill = (label, action) => el('button', { type: 'button', class: 'fill', 'data-fill': action, title: action }, label);
  const exits = (l.exits || []).map((e) => el('li', { 'data-to': e.to }, fill(e.name || e.to, `go to ${e.name || e.to}`)));
  if (!exits.length) exits.push(el('li', { class: 'muted' }, 'none'));
  const here = [];
  for (const n of state.npcs || []) {
    const dead = (n.statuses || []).includes('dead');
    const li = el('li', { 'data-npc': n.id, class: n.hostile ? 'hostile' : null },
      dead ? el('span', { class: 'n-name' }, n.name) : fill(n.name, n.hostile ? `attack ${n.name}` : `talk to ${n.name}`));
    li.firstChild.classList.add('n-name');
    if (n.hostile) li.append(el('span', { class: 'tag' }, 'hostile'));
    if (n.behavior === 'following') li.append(el('span', { class: 'tag follow' }, 'with the party'));
    if (n.hp !== undefined && n.hp !== null && n.max_hp !== undefined && n.max_hp !== null) li.append(el('span', { class: 'n-hp' }, hpText(n.hp, n.max_hp) + ' HP'));
    if (n.statuses && n.statuses.length) li.append(el('span', { class: 'n-status' }, n.statuses.join(', ')));
    here.push(li);
  }
  for (const it of l.items || []) here.push(el('li', { 'data-item': it.id, class: 'item' }, fill(it.name, `take ${it.name}`)));
  if (!here.length) here.push(el('li', { class: 'muted' }, 'nobody, nothing'));
  $('location').replaceChildren(
    el('h2', { id: 'location-name' }, l.name || ''),
    el('p', { class: 'loc-desc' }, l.description || ''),
    el('h3', null, 'Exits'), el('ul', { class: 'exits' }, ...exits),
    el('h3', null, 'Here'), el('ul', { class: 'npcs' }, ...here));
}

function questText(q) {
  let t = q.description || '';
  if (q.giver_name) t += ` From ${q.giver_name}.`;
  if (q.reward_xp > 0 || q.reward_gold > 0) t += ` Reward: ${q.reward_xp} XP, ${q.reward_gold} gold.`;
  return t;
}

function renderQuests() {
  const box = $('quests');
  if (!box) return;
  const items = (state.quests || []).map((q) => el('li', { 'data-quest': q.id, 'data-status': q.status },
    el('span', { class: 'q-name' }, q.name), el('span', { class: 'tag' }, q.status), el('p', { class: 'q-desc muted' }, questText(q))));
  if (!items.length) items.push(el('li', { class: 'muted' }, 'none yet'));
  box.replaceChildren(el('h2', null, 'Quests'), el('ul', { class: 'quests' }, ...items));
}

// ---------- hints: the DM's suggestions as chips ----------

let hints = [];

function lastHints(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev.kind === 'action') return [];
    if (ev.kind === 'narration') return asList((ev.data || {}).hints);
  }
  return [];
}

function renderHints() {
  const box = $('hints');
  if (!box) return;
  box.replaceChildren(...hints.map((h) => el('button', { type: 'button', class: 'chip', 'data-fill': h }, h)));
  box.hidden = !hints.length;
}

// Any [data-fill] button (a hint, an exit, an NPC, an item, an item's
// equip/use/drop) puts its words in the action box, ready to send.
page.addEventListener('click', (e) => {
  const b = e.target.closest('[data-fill]');
  if (!b) return;
  const box = $('action-text');
  if (!box) return;
  box.value = b.dataset.fill;
  box.focus();
});

function renderAll() {
  renderQuests();
  renderMode();
  renderCombatBar();
  renderHints();
  renderInitiative();
  renderParty();
  renderSheet();
  renderLocation();
  renderAction();
}

// ---------- the log ----------

function nearBottom() {
  return logEl.scrollHeight - logEl.scrollTop - logEl.clientHeight < 80;
}

function appendLog(ev) {
  const li = logItem(ev);
  if (!li) return;
  const stick = nearBottom();
  const streaming = $('narrating');
  // The next turn may stream while this one's narration is being saved:
  // only the narration of the streaming turn ends it.
  const ends = ev.kind === 'narration' || ev.kind === 'system';
  if (streaming && ends && (!ev.turn || streaming.dataset.turn === ev.turn)) streaming.remove();
  logEl.insertBefore(li, $('narrating'));
  while (logEl.children.length > 500) logEl.firstElementChild.remove();
  if (stick) logEl.scrollTop = logEl.scrollHeight;
}

function narrationDelta(f) {
  let li = $('narrating');
  if (!li || li.dataset.turn !== f.turn) {
    if (li) li.remove();
    li = el('li', { id: 'narrating', class: 'ev ev-narration streaming', 'data-turn': f.turn || '' },
      el('em', { class: 'who' }, 'DM is narrating… '), el('span', { class: 'text' }, ''));
    logEl.append(li);
  }
  const stick = nearBottom();
  const span = li.querySelector('.text');
  span.textContent += f.text || '';
  if (stick) logEl.scrollTop = logEl.scrollHeight;
}

// ---------- applying events to the state ----------

function findByName(name) {
  const out = [];
  for (const c of state.party || []) if (c.name === name) out.push(c);
  for (const n of state.npcs || []) if (n.name === name) out.push(n);
  if (state.combat) for (const e of state.combat.initiative || []) if (e.name === name) out.push(e);
  return out;
}

// withHP completes a combat_started entry with what the state knows of
// that combatant, until the next snapshot brings the real thing.
function withHP(e) {
  let who = null;
  if (e.id && e.id.startsWith('pc:')) who = (state.party || []).find((c) => 'pc:' + c.seat === e.id);
  else if (e.id && e.id.startsWith('dm:')) who = (state.npcs || []).find((n) => 'dm:' + n.id === e.id);
  if (!who || e.hp !== undefined) return e;
  const out = { ...e };
  if (typeof who.hp === 'number') out.hp = who.hp;
  if (typeof who.max_hp === 'number') out.max_hp = who.max_hp;
  if (who.statuses && who.statuses.length) out.statuses = who.statuses;
  return out;
}

function applyEvent(ev) {
  const d = ev.data || {};
  switch (ev.kind) {
    case 'action':
      state.busy = true;
      break;
    case 'narration':
      if (state.mode !== 'combat') state.busy = false;
      break;
    case 'damage':
    case 'heal':
      for (const x of findByName(d.target)) {
        if (typeof d.hp === 'number') x.hp = d.hp;
        if (typeof d.max_hp === 'number') x.max_hp = d.max_hp;
      }
      break;
    case 'status':
      for (const x of findByName(d.target)) {
        let st = (x.statuses || []).filter((s) => !asList(d.removed).includes(s));
        for (const a of asList(d.added)) if (!st.includes(a)) st.push(a);
        x.statuses = st;
      }
      break;
    case 'combat_started':
      state.mode = 'combat';
      state.combat = { combat_id: d.combat_id, round: 1, index: 0, initiative: (d.initiative || []).map(withHP) };
      state.busy = true;
      break;
    case 'turn':
      if (state.combat) {
        state.combat.round = d.round;
        state.combat.index = d.index;
        if (d.entry) {
          const i = state.combat.initiative.findIndex((e) => e.id === d.entry.id);
          if (i >= 0) {
            state.combat.initiative[i] = { ...state.combat.initiative[i], ...d.entry };
            state.combat.index = i;
          }
        }
      }
      state.busy = !(d.entry && d.entry.kind === 'pc');
      state.deadline = d.deadline ? Date.parse(d.deadline) : 0;
      if (d.entry && d.entry.id === 'pc:' + seat) $('error').hidden = true; // old refusals no longer apply
      break;
    case 'combat_ended':
      state.combat = null;
      break;
    case 'mode':
      state.mode = d.mode;
      if (d.mode !== 'combat') state.combat = null;
      break;
  }
}

// The server pushes a `state` frame (?state=1) whenever what the panels
// show changes beyond what applyEvent can derive: one encoding per change
// for every watcher, no snapshot fetch per event.
// The turn timer's countdown ticks in the action hint.
setInterval(() => { if (state.deadline) renderAction(); }, 1000);

function onEvent(ev) {
  if (typeof ev.seq !== 'number' || ev.seq <= lastSeq) return; // replayed twice
  if (ev.seq > lastSeq + 1) {
    // A gap means frames were lost: resume from what we have.
    resync();
    return;
  }
  lastSeq = ev.seq;
  if (ev.kind === 'action') hints = [];
  if (ev.kind === 'narration') hints = asList((ev.data || {}).hints);
  applyEvent(ev);
  appendLog(ev);
  renderAll();
}

// onState takes a pushed state: the snapshot's fields without recent.
function onState(f) {
  if (typeof f.seq !== 'number' || f.seq < lastSeq) return; // older than the log
  const recent = state.recent;
  state = f;
  state.recent = recent;
  state.deadline = f.combat && f.combat.deadline ? Date.parse(f.combat.deadline) : 0;
  renderAll();
}

function onSnapshot(snap) {
  state = snap;
  state.deadline = snap.combat && snap.combat.deadline ? Date.parse(snap.combat.deadline) : 0;
  for (const ev of snap.recent || []) {
    if (ev.seq > lastSeq) appendLog(ev);
  }
  lastSeq = Math.max(lastSeq, snap.seq || 0);
  renderAll();
}

// ---------- the websocket ----------

let ws = null;
let connected = false;
let everConnected = false;
let attempts = 0;
let failedJoins = 0;
let retryTimer = 0;
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

function connect() {
  clearTimeout(retryTimer);
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${proto}//${location.host}/ws/tables/${encodeURIComponent(tableId)}?role=${role}&since=${lastSeq}&batch=1&state=1`;
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
        failedJoins = 0;
        if (f.you && f.you.role === 'player' && f.you.seat) seat = f.you.seat;
        setConn('open', 'live');
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
        narrationDelta(f);
        break;
      case 'ack':
        if (unacked.delete(f.id)) sending = false;
        renderAction();
        break;
      case 'error':
        if (f.id && unacked.delete(f.id)) sending = false;
        showError(f.message || f.code);
        renderAction();
        break;
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
    if (!welcomed) failedJoins++;
    if (failedJoins >= 3 && role === 'player') {
      // Our seat is gone (left in another tab?): watch instead.
      role = 'spectator';
      showError('You no longer have a seat here; watching instead.');
    }
    attempts++;
    const delay = Math.min(15000, 500 * 2 ** Math.min(attempts, 5)) * (0.75 + Math.random() / 2);
    setConn('closed', e.code === 1001 ? 'server restarting…' : 'reconnecting…');
    renderAction();
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
  seatForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const btn = $('seat-submit');
    btn.disabled = true;
    try {
      const who = $('seat-player-name');
      if (who) await api('POST', '/api/players', { name: who.value });
      await api('POST', `/api/tables/${encodeURIComponent(tableId)}/seats`, {
        character: { name: $('seat-name').value, class: $('seat-class').value, backstory: $('seat-backstory').value },
      });
      location.replace(location.pathname); // reload as a seated player
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
      location.replace(location.pathname);
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
    const res = await fetch(`/api/tables/${encodeURIComponent(tableId)}/events?since=${since}&limit=${firstSeq - 1 - since}`);
    if (!res.ok) throw new Error(`${res.status}`);
    const pg = await res.json();
    const evs = (pg.events || []).filter((ev) => ev.seq < firstSeq);
    const before = logEl.scrollHeight;
    logEl.prepend(...evs.map(logItem).filter(Boolean));
    logEl.scrollTop += logEl.scrollHeight - before;
    firstSeq = evs.length ? evs[0].seq : 1;
  } catch (err) {
    showError('Could not load earlier events: ' + err.message);
  } finally {
    earlierBtn.disabled = false;
    renderEarlier();
  }
}
if (earlierBtn) earlierBtn.addEventListener('click', loadEarlier);

hints = lastHints(state.recent || []);
renderEarlier();
logEl.replaceChildren(...(state.recent || []).map(logItem).filter(Boolean));
logEl.scrollTop = logEl.scrollHeight;
renderAll();
connect();
