// The one renderer of an event line: what the table page's log shows for
// an event of PROTOCOL.md ("Event"). table.js uses it for the events the
// page ships in its snapshot JSON and for live events alike, so the two
// cannot drift apart.
//
// Pure: no DOM and no state, so `node --test web/static/` checks it
// (eventline.test.mjs). It returns plain strings; table.js puts them in the
// page with textContent, never as HTML.

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

function combatEndedLine(d) {
  let t = 'Combat ends: ' + (outcomes[d.outcome] || str(d.outcome));
  const rw = obj(d.rewards);
  const parts = [];
  const xp = str(rw.xp);
  const gold = str(rw.gold);
  if (xp && xp !== '0') parts.push(`${xp} XP`);
  if (gold && gold !== '0') parts.push(`${gold} gold`);
  parts.push(...asList(rw.loot));
  if (parts.length) t += '. Rewards: ' + parts.join(', ');
  return { text: t };
}

// worldLine reads a `world` event by the key that says what changed.
function worldLine(d, who) {
  if (has(d.location)) return { text: `The party is now at ${str(d.name) || str(d.location)}.` };
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
    return { text: `${str(r.a)} and ${str(r.b)}: relationship ${str(r.value)}.` };
  }
  if (has(d.gold)) return { text: `${who(obj(d.gold).character_id)} now has ${str(obj(d.gold).gold)} gold.` };
  if (has(d.xp)) return { text: `${who(obj(d.xp).character_id)} gains ${str(obj(d.xp).gain)} XP.` };
  if (has(d.behavior)) return { text: `${str(d.npc)} is now ${str(d.behavior)}.` };
  if (has(d.created)) return { text: `${str(d.npc)} appears.` };
  if (has(d.npc_location)) return { text: `${str(d.npc)} moves to ${str(d.npc_location)}.` };
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
    case 'dice': {
      let t = `${str(d.roller)} rolls ${diceNotation(d)} = ${str(d.total)}`;
      if (str(d.purpose)) t += ` (${str(d.purpose)})`;
      return { text: t };
    }
    case 'damage':
      return { text: `${str(d.target)} takes ${str(d.amount)} damage (${str(d.hp)}/${str(d.max_hp)} HP)` };
    case 'heal':
      return { text: `${str(d.target)} heals ${str(d.amount)} (${str(d.hp)}/${str(d.max_hp)} HP)` };
    case 'status':
      return statusLine(d);
    case 'combat_started': {
      const order = (Array.isArray(d.initiative) ? d.initiative : [])
        .filter((e) => e && e.kind !== 'bookend')
        .map((e) => (str(e.initiative) ? `${str(e.name)} ${str(e.initiative)}` : str(e.name)));
      return { text: 'Combat begins! Initiative: ' + order.join(', ') };
    }
    case 'turn':
      return { text: `Round ${str(d.round)}: ${str(obj(d.entry).name)}'s turn` };
    case 'combat_ended':
      return combatEndedLine(d);
    case 'mode':
      return { text: d.mode === 'combat' ? 'The table enters combat.' : 'The table returns to exploration.' };
    case 'world':
      return worldLine(d, who);
    case 'system':
      return { text: str(d.message) };
    case 'combatant_joined':
      return { text: `${str(d.name)} joins the fight (initiative ${str(d.initiative)}).` };
    case 'player_joined':
      return { text: `${str(d.name)} joins the table${d.role === 'spectator' ? ' as a spectator' : ''}.` };
    case 'player_left':
      return { text: `${str(d.name)} leaves the table.` };
    default:
      return null;
  }
}
