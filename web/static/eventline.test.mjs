// How each event kind reads in the table page's log (eventline.js).
// Run with `node --test web/static/` (part of `make test`).

import assert from 'node:assert/strict';
import test from 'node:test';

import { eventLine } from './eventline.js';

const names = { c1: 'Brunhild' };
const characterName = (id) => names[id] || '';

// Each case: an event as it arrives (from the page's JSON or the
// websocket), and the line the log shows; who '' means no bold name.
const cases = [
  ['narration', { kind: 'narration', data: { agent: 'narrative', text: 'Rain.' } }, '', 'Rain.'],
  ['action', { kind: 'action', data: { character_id: 'c1', text: 'I go north' } }, 'Brunhild', 'I go north'],
  ['action by name', { kind: 'action', data: { character_id: 'c9', name: 'Vesna', text: 'I hide' } }, 'Vesna', 'I hide'],
  ['action by nobody known', { kind: 'action', data: { character_id: 'c9', text: 'I hide' } }, 'Someone', 'I hide'],
  ['chat', { kind: 'chat', data: { name: 'Ann', text: 'brb' } }, 'Ann', 'brb'],
  ['dice', { kind: 'dice', data: { roller: 'Snikket', purpose: 'attack on Brunhild', notation: '1d100+2', rolls: [55], modifier: 2, total: 57 } },
    '', 'Snikket rolls 1d100+2 = 57 (attack on Brunhild)'],
  ['dice, modifier outside the notation', { kind: 'dice', data: { roller: 'Vesna', notation: '1d20', modifier: -1, total: 12 } },
    '', 'Vesna rolls 1d20-1 = 12'],
  ['dice, advantage: the kept die, modifier, AC and outcome', { kind: 'dice', data: { roller: 'Tamsin', purpose: 'attack on Goblin (advantage)', notation: '2d20kh1+4', rolls: [3, 14], kept: 14, modifier: 4, total: 18, against: 13, outcome: 'hit' } },
    '', 'Tamsin rolls 2d20kh1+4 (attack on Goblin, advantage): keeps 14 of 3 and 14 + 4 = 18 vs AC 13 \u2014 HIT'],
  ['dice, disadvantage miss', { kind: 'dice', data: { roller: 'Tamsin', purpose: 'attack on Goblin (disadvantage)', notation: '2d20kl1-1', rolls: [3, 14], kept: 3, modifier: -1, total: 2, against: 13, outcome: 'miss' } },
    '', 'Tamsin rolls 2d20kl1-1 (attack on Goblin, disadvantage): keeps 3 of 3 and 14 \u2212 1 = 2 vs AC 13 \u2014 MISS'],
  ['dice, d100 attack against a defence roll', { kind: 'dice', data: { roller: 'Snikket', purpose: 'attack on Brunhild', notation: '1d100+2', rolls: [97], modifier: 2, total: 99, against: 40, outcome: 'crit' } },
    '', 'Snikket rolls 1d100+2 (attack on Brunhild): 97 + 2 = 99 vs defence 40 \u2014 CRIT'],
  ['damage', { kind: 'damage', data: { target: 'Snikket', amount: 12, hp: 6, max_hp: 18 } }, '', 'Snikket takes 12 damage (6/18 HP)'],
  ['heal', { kind: 'heal', data: { target: 'Brunhild', amount: 1, hp: 1, max_hp: 45 } }, '', 'Brunhild heals 1 (1/45 HP)'],
  ['status', { kind: 'status', data: { target: 'Vesna', added: ['defending'], removed: ['off-balance'] } }, '', 'Vesna is now defending and is no longer off-balance'],
  ['status, effect', { kind: 'status', data: { target: 'Vesna', added: ['poisoned'], rounds: 3 } }, '', 'Vesna is now poisoned'],
  ['status, turn skipped', { kind: 'status', data: { target: 'Vesna', skipped_turn: true, reason: 'stunned' } }, '', 'Vesna is stunned and loses the turn'],
  ['note', { kind: 'note', data: { id: 'n1', text: 'The innkeeper is Bram.', by: 'p1' } }, '', 'Note: The innkeeper is Bram.'],
  ['retcon', { kind: 'retcon', data: { turn: 't7', from_seq: 40, to_seq: 44, by: 'p1', then: 'retry' } }, '', "\u21B6 The table's owner undid turn 7. The DM plays it again."],
  ['combat started', { kind: 'combat_started', data: { combat_id: 'cb1', location: 'mill', initiative: [{ id: 'dm', name: 'DM', kind: 'bookend' }, { id: 'pc:1', name: 'Brunhild', kind: 'pc', initiative: 85 }] } },
    '', 'Combat begins! Initiative: Brunhild 85'],
  ['combatant joined', { kind: 'combatant_joined', data: { entry: 'dm:wolf', name: 'Wolf', initiative: 41 } }, '', 'Wolf joins the fight (initiative 41).'],
  ['turn', { kind: 'turn', data: { round: 1, entry: { name: 'Snikket' } } }, '', "Round 1: Snikket's turn"],
  ['turn of the table page snapshot', { seq: 40, kind: 'turn', data: { round: 2, index: 2, entry: { id: 'pc:2', name: 'Vesna', kind: 'pc' } } },
    '', "Round 2: Vesna's turn"],
  ['combat ended', { kind: 'combat_ended', data: { outcome: 'player_win', rewards: { xp: 50, gold: 3, loot: ['Lantern'] } } }, '', 'Combat ends: victory. Rewards: 50 XP, 3 gold, Lantern'],
  ['combat ended, who got what', { kind: 'combat_ended', data: { outcome: 'player_win', rewards: { xp: 200, gold: 25, loot: ['Rusty sword'], shares: [{ name: 'Tamsin', xp: 200, gold: 25 }], missed: ['Odo'], level_ups: ['Tamsin reaches level 2'] } } },
    '', 'Combat ends: victory. Tamsin gains 200 XP and 25 gold (Odo missed out). Dropped: Rusty sword. Tamsin reaches level 2!'],
  ['combat ended, nothing won', { kind: 'combat_ended', data: { combat_id: 'cb2', outcome: 'player_die', rewards: { xp: 0, gold: 0, loot: [] } } }, '', 'Combat ends: the party has fallen'],
  ['mode, combat', { kind: 'mode', data: { mode: 'combat' } }, '', 'The table enters combat.'],
  ['mode, narrative', { kind: 'mode', data: { mode: 'narrative' } }, '', 'The table is exploring again.'],
  ['moved', { kind: 'world', data: { location: 'mill', name: 'The Old Mill' } }, '', 'The party is now at The Old Mill.'],
  ['set down after a fight', { kind: 'world', data: { location: 'square' } }, '', 'The party is now at the square.'],
  ['picked up', { kind: 'world', data: { inventory: { character_id: 'c1', added: 'Bone totem' } } }, '', 'Brunhild takes Bone totem.'],
  ['given away', { kind: 'world', data: { inventory: { character_id: 'c1', removed: 'Potion', item_id: 'i8' } } }, '', 'Brunhild no longer has Potion.'],
  ['quest', { kind: 'world', data: { quest: { id: 'q1', name: 'The Mill', status: 'active' } } }, '', 'Quest \u201cThe Mill\u201d: active.'],
  ['relationship', { kind: 'world', data: { relationship: { a: 'Brunhild', b: 'Elira', value: -20 } } }, '', 'Brunhild and Elira are now on bad terms.'],
  ['equipped', { kind: 'world', data: { equipped: { character_id: 'c1', item: "Father's longsword", item_id: 'i9', slot: 'weapon' } } }, '', "Brunhild equips Father's longsword."],
  ['gold', { kind: 'world', data: { gold: { character_id: 'c1', change: -5, gold: 10, reason: 'a bribe' } } }, '', 'Brunhild now has 10 gold.'],
  ['xp', { kind: 'world', data: { xp: { character_id: 'c1', gain: 20, xp: 120, level: 2 } } }, '', 'Brunhild gains 20 XP.'],
  ['npc behavior', { kind: 'world', data: { npc: 'Elira', behavior: 'following' } }, '', 'Elira now travels with the party.'],
  ['npc created', { kind: 'world', data: { npc: 'Elira', npc_location: 'square', created: true } }, '', 'Elira appears.'],
  ['npc moved', { kind: 'world', data: { npc: 'Elira', npc_location: 'mill' } }, '', 'Elira goes to the mill.'],
  ['npc moved, named place', { kind: 'world', data: { npc: 'Elira', npc_location: 'mill', location_name: 'The Old Mill' } }, '', 'Elira goes to The Old Mill.'],
  ['npc turns hostile', { kind: 'world', data: { npc: 'Elira', behavior: 'hostile' } }, '', 'Elira turns hostile.'],
  ['location created', { kind: 'world', data: { new_location: 'cellar', name: 'The Cellar' } }, '', 'A new place: The Cellar.'],
  ['system', { kind: 'system', data: { code: 'unavailable', message: 'The DM is unavailable.' } }, '', 'The DM is unavailable.'],
  ['joined', { kind: 'player_joined', data: { name: 'Ann', role: 'player' } }, '', 'Ann joins the table.'],
  ['joined with a character', { kind: 'player_joined', data: { name: 'Ann', role: 'player', character_id: 'c1', character: 'Brunhild' } }, '', 'Ann joins the table as Brunhild.'],
  ['joined to watch', { kind: 'player_joined', data: { name: 'Ann', role: 'spectator' } }, '', 'Ann joins the table as a spectator.'],
  ['left', { kind: 'player_left', data: { player_id: 'p1', name: 'Ann', seat: '1', role: 'player' } }, '', 'Ann leaves the table.'],
  ['removed by the owner', { kind: 'player_left', data: { player_id: 'p1', name: 'Ann', seat: '1', role: 'player', by: 'owner' } }, '', "The table's owner removed Ann from the table."],
];

for (const [name, ev, who, text] of cases) {
  test(name, () => {
    const l = eventLine(ev, characterName);
    assert.ok(l, 'the event is shown');
    assert.equal(l.who || '', who);
    assert.equal(l.text, text);
  });
}

test('events the log does not show', () => {
  for (const ev of [
    { kind: 'mystery' },
    { kind: 'status', data: { target: 'Vesna' } },
    { kind: 'world', data: { inventory: { character_id: 'c1' } } },
    { kind: 'world', data: { weather: 'rain' } },
  ]) {
    assert.equal(eventLine(ev, characterName), null, JSON.stringify(ev));
  }
});

test('missing fields read as empty, never "undefined"', () => {
  for (const kind of ['dice', 'damage', 'heal', 'turn', 'combat_started', 'combat_ended', 'combatant_joined', 'player_joined', 'player_left']) {
    const l = eventLine({ kind }, characterName);
    assert.ok(l && !/undefined|null|\[object/.test(l.text), `${kind}: ${l && l.text}`);
  }
});

test('player text stays text', () => {
  const l = eventLine({ kind: 'chat', data: { name: '<b>Ann</b>', text: '<img src=x onerror=alert(1)>' } }, characterName);
  assert.equal(l.who, '<b>Ann</b>');
  assert.equal(l.text, '<img src=x onerror=alert(1)>');
});
