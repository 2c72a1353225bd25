// The one renderer of the table page's panels: initiative, party, sheet,
// location, quests, hints, the combat bar, the badges and the action box.
//
// Why here and not in templ: each panel is built only from the JSON view
// the hub already sends (the page's snapshot, then `state` frames), and
// table.templ renders only the shell these fill. The alternative,
// re-rendering templ fragments per watcher and morphing them in, costs
// the server for every watcher of every state change. BenchmarkStateChange
// (web/panels_bench_test.go), at 16 spectators, load average 19-22 on 2
// cores: the state frame the hub sends anyway is encoded once, 19-58 µs
// and 4.6 kB per watcher; the four panels' HTML rendered for each watcher
// took 460-550 µs and 5,040 allocations, 4.3 kB per watcher, before any
// request to fetch it or trip through the table's goroutine. The browser
// pays the rendering here instead (e2e/run.mjs logs it per state).
//
// Whether the viewer may act is the server's decision (the party entry's
// can_act and turn, views.go turnOf): this file obeys it.
//
// Pure: functions of the state, returning node descriptions (dom.js), so
// `node --test web/static/` reads them (panels.test.mjs).

import { h } from './dom.js';

const hpText = (hp, max) => `${hp}/${max}`;
const has = (v) => v !== undefined && v !== null;
const list = (v) => (Array.isArray(v) ? v : []);

// me is the viewer's character: the party member at seat ('' for a
// spectator), or null.
export function me(s, seat) {
  if (!seat) return null;
  return list(s.party).find((c) => c.seat === seat) || null;
}

// activeEntry is the initiative entry whose turn it is, or null.
export function activeEntry(s) {
  const cb = s.combat;
  if (!cb || !cb.initiative || cb.index < 0 || cb.index >= cb.initiative.length) return null;
  return cb.initiative[cb.index];
}

// freeCombat: the table's combat style is free (combat_mode "narrative"):
// no initiative turns, so no order and no active marker.
const freeCombat = (s) => !!s.table && s.table.combat_mode === 'narrative';

// action is what the action box shows: whether it takes an act, the hint
// under it, whether it is the viewer's turn, and whether to mark the box
// (a fight in which the viewer may act now). conn is what only the page
// knows: {connected, everConnected, sending (an act awaits its ack)};
// now is the clock, for the turn timer.
export function action(s, seat, conn, now = Date.now()) {
  const c = me(s, seat);
  if (!c) return { enabled: false, hint: '', myTurn: false, marked: false };
  const act = activeEntry(s);
  const deadline = s.combat && s.combat.deadline ? Date.parse(s.combat.deadline) : 0;
  const left = deadline ? Math.max(0, Math.round((deadline - now) / 1000)) : -1;
  const clock = left >= 0 && act && act.kind === 'pc' ? ` (${left}s left)` : '';
  let hint = 'What do you do?';
  if (c.turn === 'down') hint = 'You are down and cannot act.';
  else if (s.busy) hint = 'The DM is resolving a turn…';
  else if (c.turn === 'yours') hint = 'Your turn! What do you do?' + clock;
  else if (c.turn === 'waiting') hint = act ? `Waiting for ${act.name}…${clock}` : 'Waiting…';
  if (s.paused) hint = 'The table is paused; what you type stays here until it resumes.';
  if (s.cannot_save) hint = 'Waiting for the server to save…';
  else if (conn.sending) hint = 'Sending…';
  if (!conn.connected) hint = conn.everConnected ? 'Reconnecting… your seat is kept.' : 'Connecting…';
  const may = !!c.can_act && !s.busy && !s.paused && !s.cannot_save;
  return {
    enabled: may && !conn.sending && !!conn.connected,
    hint,
    myTurn: c.turn === 'yours',
    marked: may && s.mode === 'combat',
  };
}

// badges: the #mode and #spectators badges.
export function badges(s) {
  const mode = s.mode || 'narrative';
  const n = (s.table && s.table.spectators) || 0;
  return { mode, modeText: mode === 'combat' ? 'fighting' : 'exploring', spectators: `${n} watching` };
}

// combatBar is the compact bar shown on small screens while a fight runs:
// the round, whose turn, your HP.
export function combatBar(s, seat) {
  const cb = s.combat;
  if (!cb || s.mode !== 'combat') return { hidden: true, mine: false, children: [] };
  const c = me(s, seat);
  const mine = !!c && c.turn === 'yours';
  const act = activeEntry(s);
  let turn = 'Free combat: act any time';
  if (!freeCombat(s)) turn = act ? (mine ? 'Your turn!' : `${act.name}'s turn`) : '';
  return {
    hidden: false,
    mine,
    children: [
      h('span', { class: 'cb-round' }, 'Round ', h('span', { id: 'cb-round' }, String(cb.round))),
      h('span', { class: 'cb-turn', id: 'cb-turn' }, turn),
      h('span', { class: 'cb-hp', id: 'cb-hp' }, c ? `${c.name} ${hpText(c.hp, c.max_hp)} HP` : ''),
    ],
  };
}

const isOut = (st) => list(st).some((x) => x === 'dead' || x === 'unconscious' || x === 'fled');

// combatPanel is the initiative card: the round and the order, the active
// entry marked, and the entry the viewer targets (target, tapped there or
// among the fight's chips).
export function combatPanel(s, seat, target) {
  const cb = s.combat;
  const act = activeEntry(s);
  const free = freeCombat(s);
  const items = [];
  let entries = (cb && cb.initiative) || [];
  // A free fight has no order: the party, then the foes, by name.
  if (free) {
    entries = entries.filter((e) => e.kind !== 'bookend')
      .sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : (a.kind === 'pc' ? -1 : 1)));
  }
  for (const e of entries) {
    const active = !free && !!act && act.id === e.id;
    items.push(h('li', {
      'data-entry': e.id,
      class: `entry kind-${e.kind}${active ? ' active' : ''}${isOut(e.statuses) ? ' out' : ''}${target && target === e.id ? ' targeted' : ''}`,
      'aria-current': active ? 'true' : null,
    },
    h('span', { class: 'e-name' }, e.name),
    !free && has(e.initiative) && h('span', { class: 'e-init', title: 'initiative' }, String(e.initiative)),
    has(e.hp) && has(e.max_hp) && h('span', { class: 'e-hp' }, hpText(e.hp, e.max_hp) + ' HP'),
    has(e.health) && h('span', { class: 'e-hp e-health' }, e.health),
    list(e.statuses).length > 0 && h('span', { class: 'e-status' }, e.statuses.join(', '))));
  }
  return [
    free
      ? h('h2', null, 'In the fight')
      : h('h2', null, 'Initiative ', h('span', { class: 'round-label' }, 'Round ', h('span', { id: 'round' }, cb ? String(cb.round) : '–'))),
    h(free ? 'ul' : 'ol', { id: 'initiative', class: free ? 'initiative free' : 'initiative' }, items),
    h('p', { id: 'no-combat', class: 'muted', hidden: !!cb }, 'No fight right now.'),
  ];
}

// hpMeter is an HP bar: a <meter> colours itself from low/high/optimum,
// so no inline style is needed (the CSP forbids them).
function hpMeter(hp, max) {
  return h('meter', {
    class: 'hp', min: 0, max: Math.max(max, 1), low: Math.floor(max / 3) + 1, high: Math.floor((max * 2) / 3), optimum: max, value: hp,
  }, hpText(hp, max));
}

// party lists the characters: online or not, class and level, HP.
export function party(s) {
  const online = new Set(list(s.online));
  return list(s.party).map((c) => {
    const on = online.has(c.seat);
    const sts = list(c.statuses);
    return h('li', { 'data-character': c.id, 'data-seat': c.seat },
      h('div', { class: 'row' },
        h('span', { class: `c-online${on ? ' on' : ''}`, title: on ? 'online' : 'not connected', 'aria-label': on ? 'online' : 'not connected' }, on ? '\u25cf' : '\u25cb'),
        h('span', { class: 'c-name' }, c.name),
        h('span', { class: 'c-class' }, `${c.class} ${c.level}`),
        h('span', { class: 'c-hp' }, hpText(c.hp, c.max_hp))),
      hpMeter(c.hp, c.max_hp),
      (c.player || sts.length > 0) && h('div', { class: 'c-sub muted' },
        c.player && h('span', { class: 'c-player' }, c.player),
        sts.length > 0 && h('span', { class: 'c-status' }, sts.join(', '))));
  });
}

// inventoryItem is one thing the character carries, with the verbs that
// fit it as buttons that fill the action box.
function inventoryItem(it) {
  const verbs = [];
  if ((it.category === 'weapon' || it.category === 'armour') && !it.equipped) verbs.push('equip');
  if (it.category === 'consumable') verbs.push('use');
  verbs.push('drop');
  return h('li', { 'data-item': it.id },
    h('span', { class: 'i-name' }, it.name),
    list(it.buffs).map((b) => h('span', { class: 'tag buff', title: 'buff' }, '+ ' + b)),
    list(it.flaws).map((f) => h('span', { class: 'tag flaw', title: 'flaw' }, '\u2212 ' + f)),
    it.equipped && h('span', { class: 'tag follow' }, 'equipped'),
    h('span', { class: 'i-acts' }, verbs.map((verb) => h('button', { type: 'button', class: 'chip small', 'data-fill': `${verb} ${it.name}` }, verb))));
}

// sheet is the viewer's character sheet, or nothing for a spectator.
export function sheet(s, seat) {
  const c = me(s, seat);
  if (!c) return [];
  const eq = c.equipped || {};
  const st = c.stats || {};
  const sts = list(c.statuses);
  const row = (label, field, value) => [h('dt', null, label), h('dd', { 'data-field': field }, value)];
  const inv = list(c.inventory).map(inventoryItem);
  return [
    h('h2', null, c.name),
    h('dl', { class: 'sheet' },
      row('Class', 'class', c.class),
      row('Level', 'level', String(c.level)),
      row('XP', 'xp', c.xp_next ? `${c.xp} / ${c.xp_next} (level ${c.level + 1})` : String(c.xp)),
      row('HP', 'hp', hpText(c.hp, c.max_hp)),
      row('Gold', 'gold', String(c.gold)),
      row('Weapon', 'weapon', (eq.weapon && eq.weapon.name) || ''),
      row('Armour', 'armour', (eq.armour && eq.armour.name) || ''),
      row('Defence', 'defence', c.ac ? `AC ${c.ac}` : `absorbs ${c.absorption || 0} damage`),
      row('Stats', 'stats', statsText(st)),
      sts.length > 0 && row('Status', 'statuses', sts.join(', '))),
    ...abilityList(c),
    h('h3', null, 'Inventory'),
    h('ul', { class: 'inventory', 'data-field': 'inventory' }, inv.length ? inv : h('li', { class: 'muted' }, 'nothing')),
  ];
}

// fill is a button that puts an action in the action box.
const fill = (label, act, cls) => h('button', { type: 'button', class: cls ? `fill ${cls}` : 'fill', 'data-fill': act, title: act }, label);

// location is where the party is: its exits, who and what is here.
export function location(s) {
  const l = s.location || {};
  const exits = list(l.exits).map((e) => h('li', { 'data-to': e.to }, fill(e.name || e.to, `go to ${e.name || e.to}`)));
  const here = list(s.npcs).map((n) => h('li', { 'data-npc': n.id, class: n.hostile ? 'hostile' : null },
    list(n.statuses).includes('dead') ? h('span', { class: 'n-name' }, n.name) : fill(n.name, n.hostile ? `attack ${n.name}` : `talk to ${n.name}`, 'n-name'),
    n.hostile && h('span', { class: 'tag' }, 'hostile'),
    n.behavior === 'following' && h('span', { class: 'tag follow' }, 'with the party'),
    has(n.hp) && has(n.max_hp) && h('span', { class: 'n-hp' }, hpText(n.hp, n.max_hp) + ' HP'),
    has(n.health) && h('span', { class: 'n-hp n-health' }, n.health),
    list(n.statuses).length > 0 && h('span', { class: 'n-status' }, n.statuses.join(', '))));
  for (const it of list(l.items)) here.push(h('li', { 'data-item': it.id, class: 'item' }, fill(it.name, `take ${it.name}`)));
  return [
    h('h2', { id: 'location-name' }, l.name || ''),
    h('p', { class: 'loc-desc' }, l.description || ''),
    h('h3', null, 'Exits'), h('ul', { class: 'exits' }, exits.length ? exits : h('li', { class: 'muted' }, 'none')),
    h('h3', null, 'Here'), h('ul', { class: 'npcs' }, here.length ? here : h('li', { class: 'muted' }, 'nobody, nothing')),
  ];
}

// statsText joins each stat to its number with a no-break space, so a
// narrow sheet wraps between stats, never inside one.
export function statsText(st) {
  return [['STR', st.str], ['AGI', st.agi], ['CON', st.con], ['INT', st.int], ['WIS', st.wis], ['CHA', st.cha]]
    .map(([k, v]) => `${k}\u00a0${v}`).join(' · ');
}

// questText names the giver only when the description does not already.
export function questText(q) {
  let t = q.description || '';
  if (q.giver_name && !t.includes(q.giver_name)) t += ` From ${q.giver_name}.`;
  if (q.reward_xp > 0 || q.reward_gold > 0) t += ` Reward: ${q.reward_xp} XP, ${q.reward_gold} gold.`;
  return t;
}

// quests lists the quests with their status, giver and reward.
export function quests(s) {
  const items = list(s.quests).map((q) => h('li', { 'data-quest': q.id, 'data-status': q.status },
    h('span', { class: 'q-name' }, q.name), h('span', { class: 'tag' }, q.status), h('p', { class: 'q-desc muted' }, questText(q))));
  return [h('h2', null, 'Quests'), h('ul', { class: 'quests' }, items.length ? items : h('li', { class: 'muted' }, 'none yet'))];
}

// hints are the DM's suggestions as chips that fill the action box.
export function hints(xs) {
  return xs.map((x) => h('button', { type: 'button', class: 'chip', 'data-fill': x }, x));
}

// shops lists the shops kept where the party is: each line of stock with
// its price (a chip that fills "buy … from …"), the share of an item's
// price the keeper pays back, and what it would pay for each of the
// viewer's items (chips that fill "sell … to …"). The engine checks the
// gold when the DM makes the trade.
export function shops(s, seat) {
  const c = me(s, seat);
  return list(s.shops).flatMap((sh) => {
    const who = sh.keeper_name || sh.keeper;
    // Instances of one thing at one price are one line, with how many.
    const lines = [];
    for (const l of list(sh.stock)) {
      const same = lines.find((x) => x.name === l.name && x.price === l.price);
      if (same) same.count++;
      else lines.push({ ...l, count: 1 });
    }
    const stock = lines.map((l) => h('li', { 'data-item': l.item },
      c ? fill(l.name, `buy ${l.name} from ${who}`) : h('span', null, l.name),
      l.count > 1 && h('span', { class: 'muted' }, `×${l.count}`),
      h('span', { class: 'price' }, `${l.price} gold`)));
    const buys = sh.buys_at > 0
      ? `${who} pays ${sh.buys_at}% of an item's price${list(sh.buys).length ? ` for ${sh.buys.join(', ')}` : ' for anything'}.`
      : `${who} buys nothing.`;
    const offers = c ? list(sh.offers).filter((o) => o.character === c.id).map((o) => h('li', { 'data-offer': o.item },
      fill(o.name, `sell ${o.name} to ${who}`), h('span', { class: 'price' }, `${o.price} gold`))) : [];
    return [
      h('h2', { 'data-shop': sh.keeper }, sh.name || `${who}'s shop`),
      h('p', { class: 'muted' }, `Kept by ${who}.`),
      h('h3', null, 'For sale'), h('ul', { class: 'stock' }, stock.length ? stock : h('li', { class: 'muted' }, 'sold out')),
      h('h3', null, 'Buys'), h('p', { class: 'muted buys' }, buys),
      offers.length > 0 && h('p', { class: 'muted' }, 'Your things it would buy:'),
      offers.length > 0 && h('ul', { class: 'offers' }, offers),
    ].filter(Boolean);
  });
}

// ---------- abilities: the chips of a fight, the sheet's uses ----------

const RECHARGE = { turn: 'every turn', short_rest: 'short rest', long_rest: 'long rest' };

const hostileEntry = (s, e) => {
  if (e.kind !== 'npc') return false;
  const n = list(s.npcs).find((x) => 'dm:' + x.id === e.id);
  return !n || n.hostile !== false;
};

// targets are the viewer's choices in a fight: the foes standing and the
// party members, with the foe and the ally the chips act on. target is
// the entry the viewer tapped in the tracker ('' for none): a foe is the
// foe, a party member the ally; otherwise the first foe, and the fallen,
// the most hurt or the viewer as the ally.
export function targets(s, seat, target) {
  const c = me(s, seat);
  const entries = list(s.combat && s.combat.initiative).filter((e) => e.kind !== 'bookend');
  const foes = entries.filter((e) => hostileEntry(s, e) && !isOut(e.statuses));
  const friends = list(s.party).filter((p) => !list(p.statuses).includes('fled') && !list(p.statuses).includes('dead'));
  const foe = foes.find((f) => f.id === target) || foes[0] || null;
  const fallen = friends.filter((p) => c && p.id !== c.id && list(p.statuses).includes('unconscious'));
  let ally = friends.find((p) => 'pc:' + p.seat === target) || fallen[0] || null;
  if (!ally) {
    const hurt = friends.filter((p) => p.hp < p.max_hp).sort((a, b) => a.hp / a.max_hp - b.hp / b.max_hp);
    ally = hurt[0] || c;
  }
  return { foes, foe, ally, fallen };
}

// abilityWords are the plain words an ability chip puts in the action box
// (the narrator reads them as a player's: "Magic missile on Snikket").
export function abilityWords(a, t, c) {
  if (a.target === 'enemy') return t.foe ? `${a.name} on ${t.foe.name}` : a.name;
  if (a.target === 'ally') return t.ally && c && t.ally.id !== c.id ? `${a.name} on ${t.ally.name}` : `${a.name} on myself`;
  return a.name;
}

// fightChips are the viewer's chips in a fight when they may act: the foes
// to target (tap one here or in the tracker), then attack, each ability
// with its uses (a spent one is disabled and says when it comes back),
// a potion for a fallen friend, and defend.
export function fightChips(s, seat, target) {
  const c = me(s, seat);
  if (!c || s.mode !== 'combat' || !s.combat || !c.can_act) return [];
  const t = targets(s, seat, target);
  const out = [];
  if (t.foes.length) {
    out.push(h('span', { class: 'chips-label' }, 'Target:'));
    for (const f of t.foes) {
      const on = t.foe && f.id === t.foe.id;
      out.push(h('button', { type: 'button', class: `chip target${on ? ' selected' : ''}`, 'data-target': f.id, 'aria-pressed': on ? 'true' : 'false' }, f.name));
    }
    out.push(h('span', { class: 'chips-break' }));
  }
  if (t.foe) out.push(h('button', { type: 'button', class: 'chip act', 'data-fill': `attack ${t.foe.name}` }, `Attack ${t.foe.name}`));
  for (const a of list(c.abilities)) {
    const spent = a.uses <= 0;
    out.push(h('button', {
      type: 'button', class: `chip ability${spent ? ' spent' : ''}`, 'data-ability': a.id, 'data-fill': abilityWords(a, t, c),
      disabled: spent ? true : null, title: spent ? `${a.name}: spent (${RECHARGE[a.recharge] || a.recharge})` : a.description,
    }, `${a.name} ${a.uses}/${a.max_uses}`));
  }
  const potion = list(c.inventory).find((it) => it.category === 'consumable' && /potion/i.test(it.name));
  for (const f of t.fallen) {
    if (potion) out.push(h('button', { type: 'button', class: 'chip potion', 'data-fill': `give my ${potion.name.toLowerCase()} to ${f.name}` }, `Give ${potion.name} to ${f.name}`));
  }
  out.push(h('button', { type: 'button', class: 'chip act', 'data-fill': 'defend' }, 'Defend'));
  return out;
}

// abilityList is the sheet's list of abilities with their uses.
export function abilityList(c) {
  const as = list(c.abilities);
  if (!as.length) return [];
  return [
    h('h3', null, 'Abilities'),
    h('ul', { class: 'abilities', 'data-field': 'abilities' }, as.map((a) => h('li', { 'data-ability': a.id, title: a.description },
      h('span', { class: 'a-name' }, a.name),
      h('span', { class: `a-uses${a.uses <= 0 ? ' spent' : ''}` }, `${a.uses}/${a.max_uses}`),
      h('span', { class: 'a-recharge muted' }, RECHARGE[a.recharge] || a.recharge)))),
  ];
}

// afterFight is what the DM suggests when a fight is over and it has not
// suggested anything since: after a win, loot and a rest (a potion for
// the hurt); after a wipe, a long rest and the way to a merchant; after
// fleeing, a rest. From the state alone: the last result, the party and
// where it stands.
export function afterFight(s, seat) {
  const r = s.last_combat_result;
  if (!r || s.mode === 'combat') return [];
  const c = me(s, seat);
  const out = [];
  const hurt = list(s.party).some((p) => p.hp < p.max_hp);
  const spent = list(s.party).some((p) => list(p.abilities).some((a) => a.uses < a.max_uses));
  const exits = list(s.location && s.location.exits).map((e) => `go to ${e.name || e.to}`);
  if (r.outcome === 'player_die') {
    out.push('we camp for the night');
    out.push(...exits.slice(0, 2));
    return out;
  }
  if ((r.outcome === 'player_win' || r.outcome === 'npc_flee') && (list(r.loot).length || list(r.defeated).length)) out.push('loot the bodies');
  if (hurt || spent) out.push('we take a short rest');
  const potion = c && list(c.inventory).find((it) => it.category === 'consumable' && /potion/i.test(it.name));
  if (c && potion && c.hp * 2 < c.max_hp) out.push(`drink the ${potion.name.toLowerCase()}`);
  if (r.outcome === 'player_flee') out.push(...exits.slice(0, 1));
  return out;
}

// notes are the table's notes (facts the DM must honour), oldest first.
// viewer = {playerId, owner}: the author of a note, and the table's owner,
// may remove it.
export function notes(s, viewer = {}) {
  const items = list(s.notes).map((n) => h('li', { class: 'note', 'data-note-id': n.id },
    h('span', { class: 'note-text' }, n.text),
    n.by_name && h('span', { class: 'note-by muted' }, ` \u2014 ${n.by_name}`),
    (viewer.owner || (viewer.playerId && n.by === viewer.playerId)) &&
      h('button', { type: 'button', class: 'link note-del', 'data-note-del': n.id, title: 'Remove this note', 'aria-label': 'Remove this note' }, '\u00d7')));
  return [h('h2', null, 'Notes'),
    h('ul', { class: 'notes' }, items.length ? items : h('li', { class: 'muted' }, 'No notes yet: facts the table agrees on, which the DM must honour.'))];
}
