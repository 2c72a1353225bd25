// The one renderer of an event line: what the table page's log shows for
// an event of PROTOCOL.md ("Event"). log.js uses it for the events the
// page ships in its snapshot JSON and for live events alike, so the two
// cannot drift apart.
//
// Pure: no DOM and no state, so `node --test web/static/` checks it
// (eventline.test.mjs). It returns plain strings; log.js puts them in the
// page as text nodes, never as HTML.

const outcomes = {
  player_win: 'victory',
  player_flee: 'the party fled',
  player_die: 'the party has fallen',
  npc_flee: 'the foes fled',
  forced_end: 'the fight was called off',
  error_abort: 'aborted',
};

// str shows a scalar field, and '' for anything else, so that a missing
// field never reads "undefined".
const str = (v) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

// obj is an object field, or {} when absent.
const obj = (v) => (v && typeof v === 'object' ? v : {});

// has reports whether a field is present (a `world` event's keys say what
// changed).
const has = (v) => v !== undefined && v !== null;

// asList is a list of strings from a list or a single string.
export const asList = (v) => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : typeof v === 'string' && v ? [v] : []);

// diceNotation is the roll's notation, with the modifier if the notation
// lacks it.
function diceNotation(d) {
  let n = str(d.notation);
  const m = str(d.modifier);
  if (m && m !== '0' && !/[+-]/.test(n)) n += m.startsWith('-') ? m : '+' + m;
  return n;
}

const signed = (n) => (n < 0 ? `− ${-n}` : `+ ${n}`);

// diceLine reads a roll. An attack roll carries its target number
// (`against`: the defence roll in d100, the armour class in d20) and its
// `outcome`; a keep roll (advantage: 2d20kh1) its `kept` die. Then the line
// reads on one line as: the kept die, the modifier, the total, the target
// and HIT / MISS / CRIT / FUMBLE.
function diceLine(d) {
  const purpose = str(d.purpose);
  const kept = typeof d.kept === 'number' && d.kept > 0 ? d.kept : 0;
  const outcome = str(d.outcome);
  if (!kept && !outcome) {
    let t = `${str(d.roller)} rolls ${diceNotation(d)} = ${str(d.total)}`;
    if (purpose) t += ` (${purpose})`;
    return { text: t };
  }
  const rolls = (Array.isArray(d.rolls) ? d.rolls : []).filter((x) => typeof x === 'number');
  const mod = typeof d.modifier === 'number' ? d.modifier : 0;
  const why = purpose.replace(/ \((dis)?advantage\)$/, (m) => ', ' + m.slice(2, -1));
  let t = `${str(d.roller)} rolls ${diceNotation(d)}${why ? ` (${why})` : ''}: `;
  t += kept ? `keeps ${kept} of ${rolls.join(' and ')}` : rolls.join(' + ');
  if (mod) t += ` ${signed(mod)}`;
  t += ` = ${str(d.total)}`;
  if (outcome) {
    const label = /d20/.test(str(d.notation)) ? 'AC' : 'defence';
    if (typeof d.against === 'number') t += ` vs ${label} ${d.against}`;
    t += ` — ${outcome.toUpperCase()}`;
  }
  return { text: t, outcome };
}

function statusLine(d) {
  const parts = [];
  const added = asList(d.added);
  const removed = asList(d.removed);
  if (added.length) parts.push('is now ' + added.join(', '));
  if (removed.length) parts.push('is no longer ' + removed.join(', '));
  if (d.skipped_turn === true) parts.push(`is ${str(d.reason)} and loses the turn`);
  if (!parts.length) return null;
  return { text: `${str(d.target)} ${parts.join(' and ')}` };
}

// rewardsText says who got what: "Tamsin gains 100 XP and 25 gold; Odo
// gains 100 XP and 24 gold (Bren missed out). Dropped: Lantern."
function rewardsText(rw) {
  const shares = (Array.isArray(rw.shares) ? rw.shares : []).map(obj).map((s) => {
    const got = [];
    if (Number(s.xp) > 0) got.push(`${str(s.xp)} XP`);
    if (Number(s.gold) > 0) got.push(`${str(s.gold)} gold`);
    return `${str(s.name)} gains ${got.join(' and ')}`;
  });
  let t = shares.join('; ');
  const missed = asList(rw.missed);
  if (missed.length) t += ` (${missed.join(', ')} missed out)`;
  if (t) t += '.';
  const loot = asList(rw.loot);
  if (loot.length) t += `${t ? ' ' : ''}Dropped: ${loot.join(', ')}.`;
  const ups = asList(rw.level_ups);
  if (ups.length) t += ` ${ups.join('. ')}!`;
  return t.trim();
}

function combatEndedLine(d) {
  let t = 'Combat ends: ' + (outcomes[d.outcome] || str(d.outcome));
  const rw = obj(d.rewards);
  if (Array.isArray(rw.shares)) return { text: `${t}. ${rewardsText(rw)}` };
  const parts = [];
  const xp = str(rw.xp);
  const gold = str(rw.gold);
  if (xp && xp !== '0') parts.push(`${xp} XP`);
  if (gold && gold !== '0') parts.push(`${gold} gold`);
  parts.push(...asList(rw.loot));
  if (parts.length) t += '. Rewards: ' + parts.join(', ');
  return { text: t };
}

// placeName makes a readable place of a location id, for old events that
// carry no name: "old_mill" → "the old mill".
const placeName = (id) => 'the ' + id.replace(/[_-]+/g, ' ');

// feeling reads a relationship value (-100..100) as people would say it.
function feeling(v) {
  if (v <= -60) return 'are now enemies';
  if (v <= -20) return 'are now on bad terms';
  if (v < 20) return 'are now neither friends nor foes';
  if (v < 60) return 'are now on good terms';
  return 'are now close friends';
}

const behaviours = {
  following: 'now travels with the party',
  hostile: 'turns hostile',
  fleeing: 'flees',
  idle: 'stays put',
};

// worldLine reads a `world` event by the key that says what changed.
function worldLine(d, who) {
  if (has(d.location)) return { text: `The party is now at ${str(d.name) || placeName(str(d.location))}.` };
  if (has(d.inventory)) {
    const inv = obj(d.inventory);
    if (str(inv.added)) return { text: `${who(inv.character_id)} takes ${str(inv.added)}.` };
    if (str(inv.removed)) return { text: `${who(inv.character_id)} no longer has ${str(inv.removed)}.` };
    return null;
  }
  if (has(d.quest)) {
    const q = obj(d.quest);
    return { text: `Quest \u201c${str(q.name)}\u201d: ${str(q.status)}.` };
  }
  if (has(d.relationship)) {
    const r = obj(d.relationship);
    return { text: `${str(r.a)} and ${str(r.b)} ${feeling(Number(r.value))}.` };
  }
  if (has(d.equipped)) return { text: `${who(obj(d.equipped).character_id)} equips ${str(obj(d.equipped).item)}.` };
  if (has(d.gold)) return { text: `${who(obj(d.gold).character_id)} now has ${str(obj(d.gold).gold)} gold.` };
  if (has(d.xp)) return { text: `${who(obj(d.xp).character_id)} gains ${str(obj(d.xp).gain)} XP.` };
  if (has(d.behavior)) return { text: `${str(d.npc)} ${behaviours[str(d.behavior)] || 'is now ' + str(d.behavior)}.` };
  if (has(d.created)) return { text: `${str(d.npc)} appears.` };
  if (has(d.npc_location)) return { text: `${str(d.npc)} goes to ${str(d.location_name) || placeName(str(d.npc_location))}.` };
  if (has(d.new_location)) return { text: `A new place: ${str(d.name)}.` };
  return null;
}

// eventLine returns what the log shows for ev: {who, text} (who, when not
// empty, is shown bold before the text), or null for an event the log
// does not show. characterName(id) names a character of the party ('' if
// unknown), for events that carry only its id.
export function eventLine(ev, characterName = () => '') {
  const d = obj(ev && ev.data);
  const who = (id) => characterName(id) || 'Someone';
  switch (ev && ev.kind) {
    case 'narration':
      return { text: str(d.text) };
    case 'action':
      return { who: str(d.name) || who(d.character_id), text: str(d.text) };
    case 'chat':
      return { who: str(d.name), text: str(d.text) };
    case 'dice':
      return diceLine(d);
    case 'damage':
      if (d.health) return { text: `${str(d.target)} takes ${str(d.amount)} damage (${str(d.health)})` };
      return { text: `${str(d.target)} takes ${str(d.amount)} damage (${str(d.hp)}/${str(d.max_hp)} HP)` };
    case 'heal':
      if (d.health) return { text: `${str(d.target)} heals ${str(d.amount)} (${str(d.health)})` };
      return { text: `${str(d.target)} heals ${str(d.amount)} (${str(d.hp)}/${str(d.max_hp)} HP)` };
    case 'status':
      return statusLine(d);
    case 'combat_started': {
      const order = (Array.isArray(d.initiative) ? d.initiative : [])
        .filter((e) => e && e.kind !== 'bookend')
        .map((e) => (str(e.initiative) ? `${str(e.name)} ${str(e.initiative)}` : str(e.name)));
      if (d.combat_mode === 'free' || !order.some((o) => /\d/.test(o))) return { text: 'A fight breaks out!' };
      return { text: 'Combat begins! Initiative: ' + order.join(', ') };
    }
    case 'turn':
      return { text: `Round ${str(d.round)}: ${str(obj(d.entry).name)}'s turn` };
    case 'combat_ended':
      return combatEndedLine(d);
    case 'mode':
      return { text: d.mode === 'combat' ? 'The table enters combat.' : 'The table is exploring again.' };
    case 'world':
      return worldLine(d, who);
    case 'system':
      return { text: str(d.message) };
    case 'ability': {
      // The ability's id in words: "magic_missile" is "magic missile".
      const name = str(d.ability).replace(/_/g, ' ');
      const left = Number(d.uses_left);
      return { who: str(d.actor), text: `uses ${name}${str(d.target) ? ' on ' + str(d.target) : ''} (${left} ${left === 1 ? 'use' : 'uses'} left)` };
    }
    case 'combatant_joined':
      return { text: `${str(d.name)} joins the fight (initiative ${str(d.initiative)}).` };
    case 'player_joined':
      if (d.role !== 'spectator' && str(d.character)) return { text: `${str(d.name)} joins the table as ${str(d.character)}.` };
      return { text: `${str(d.name)} joins the table${d.role === 'spectator' ? ' as a spectator' : ''}.` };
    case 'player_left':
      if (d.by === 'owner') return { text: `The table's owner removed ${str(d.name)} from the table.` };
      if (d.by === 'operator') return { text: `The operator removed ${str(d.name)} from the table.` };
      return { text: `${str(d.name)} leaves the table.` };
    case 'note':
      return { text: `Note: ${str(d.text)}` };
    case 'note_removed':
      return { text: 'A note was removed.' };
    case 'retcon': {
      const then = d.then === 'retry' ? ' The DM plays it again.' : d.then === 'drop' ? ' The action is dropped.' : '';
      return { text: `\u21B6 The table's owner undid turn ${str(d.turn).replace(/^t/, '')}.${then}` };
    }
    case 'edit':
      return null; // applied to the narration it corrects (log.js)
    default:
      return null;
  }
}
