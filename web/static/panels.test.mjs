// What the table page's panels show for a state the server sent
// (panels.js), and that the action box obeys the server's can_act.
// Run with `node --test web/static/` (part of `make test`).

import assert from 'node:assert/strict';
import test from 'node:test';

import { text } from './dom.js';
import * as panels from './panels.js';

// fight is a tactical fight at round 2 where it is Vesna's (pc:2) turn, as
// a snapshot or state frame carries it (web/pages_test.go's combatSnapshot).
function fight() {
  return {
    table: { id: 't-1', name: 'Fight', combat_mode: 'tactical', spectators: 3 },
    seq: 40,
    mode: 'combat',
    busy: false,
    location: { id: 'mill', name: 'The Old Mill', exits: [{ to: 'square', name: 'back to the square' }], items: [] },
    party: [
      { id: 'c1', name: 'Brunhild', class: 'warrior', level: 1, hp: 30, max_hp: 45, seat: '1', player: 'Ann', statuses: [], can_act: false, turn: 'waiting' },
      { id: 'c2', name: 'Vesna', class: 'rogue', level: 1, hp: 34, max_hp: 34, seat: '2', statuses: ['off-balance'], can_act: true, turn: 'yours' },
    ],
    npcs: [{ id: 'snikket', name: 'Snikket', hostile: true, hp: 6, max_hp: 18 }],
    combat: {
      combat_id: 'cb1', round: 2, index: 2, initiative: [
        { id: 'dm', name: 'DM', kind: 'bookend' },
        { id: 'pc:1', name: 'Brunhild', kind: 'pc', initiative: 85, hp: 30, max_hp: 45 },
        { id: 'pc:2', name: 'Vesna', kind: 'pc', initiative: 60, hp: 34, max_hp: 34, statuses: ['off-balance'] },
        { id: 'dm:snikket', name: 'Snikket', kind: 'npc', initiative: 58, hp: 6, max_hp: 18 },
      ],
    },
    online: ['2'],
  };
}

const live = { connected: true, everConnected: true, sending: false };

// find returns the node descriptions under v (or a list of them) that pred
// accepts, depth first.
function find(v, pred, out = []) {
  if (Array.isArray(v)) {
    v.forEach((x) => find(x, pred, out));
  } else if (v && typeof v === 'object') {
    if (pred(v)) out.push(v);
    find(v.children, pred, out);
  }
  return out;
}

test('the initiative card marks the active entry once, with the round, HP and statuses', () => {
  const card = panels.combatPanel(fight());
  const entries = find(card, (v) => v.tag === 'li');
  assert.deepEqual(entries.map((li) => li.attrs['data-entry']), ['dm', 'pc:1', 'pc:2', 'dm:snikket']);
  const active = entries.filter((li) => li.attrs.class.split(' ').includes('active'));
  assert.deepEqual(active.map((li) => [li.attrs['data-entry'], li.attrs['aria-current']]), [['pc:2', 'true']]);
  assert.equal(text(find(card, (v) => v.attrs.id === 'round')[0]), '2');
  assert.equal(text(entries[1]), 'Brunhild8530/45 HP');
  assert.equal(text(entries[2]), 'Vesna6034/34 HPoff-balance');
  assert.equal(find(card, (v) => v.attrs.id === 'no-combat')[0].attrs.hidden, '');
});

test('in a free fight the card shows no order and no active entry', () => {
  const s = fight();
  s.table.combat_mode = 'narrative';
  const card = panels.combatPanel(s);
  const entries = find(card, (v) => v.tag === 'li');
  assert.deepEqual(entries.map((li) => li.attrs['data-entry']), ['pc:1', 'pc:2', 'dm:snikket']);
  assert.equal(entries.filter((li) => li.attrs.class.includes('active')).length, 0);
  assert.equal(find(card, (v) => v.attrs.class === 'e-init').length, 0);
  assert.equal(find(card, (v) => v.tag === 'ol').length, 0, 'an ordered list');
  assert.equal(find(card, (v) => v.attrs.id === 'round').length, 0, 'a round number');
});

test('in a free fight the order of initiative does not show through the list', () => {
  const s = fight();
  s.table.combat_mode = 'narrative';
  s.combat.initiative.reverse();
  const names = find(panels.combatPanel(s), (v) => v.tag === 'li').map((li) => li.attrs['data-entry']);
  assert.deepEqual(names, ['pc:1', 'pc:2', 'dm:snikket']);
});

test('NPC health in words shows the word, never numbers', () => {
  const s = fight();
  const sn = s.combat.initiative.find((e) => e.id === 'dm:snikket');
  delete sn.hp; delete sn.max_hp; sn.health = 'bloodied';
  const li = find(panels.combatPanel(s), (v) => v.attrs['data-entry'] === 'dm:snikket')[0];
  assert.match(text(li), /bloodied/);
  assert.doesNotMatch(text(li), /\d+\/\d+/);
});

test('a paused table keeps the box closed and says why', () => {
  const s = fight();
  s.paused = true;
  const a = panels.action(s, '2', { connected: true, everConnected: true, sending: false });
  assert.equal(a.enabled, false);
  assert.match(a.hint, /paused/);
});

test('while the server cannot save, the box says it waits; while an act is sent, that it is sent', () => {
  const s = fight();
  assert.equal(panels.action(s, '2', { ...live, sending: true }).hint, 'Sending…');
  s.cannot_save = 'The server cannot save right now.';
  const a = panels.action(s, '2', live);
  assert.equal(a.enabled, false); // an act would be refused: nothing can be saved
  assert.equal(a.hint, 'Waiting for the server to save…');
});

test('the party shows who is online, HP as a meter and the player', () => {
  const [brunhild, vesna] = panels.party(fight());
  assert.equal(find(brunhild, (v) => v.attrs.class === 'c-online')[0].attrs['aria-label'], 'not connected');
  assert.equal(find(vesna, (v) => v.attrs.class === 'c-online on')[0].attrs['aria-label'], 'online');
  const meter = find(brunhild, (v) => v.tag === 'meter')[0];
  assert.deepEqual([meter.attrs.value, meter.attrs.max, meter.attrs.low, meter.attrs.high], ['30', '45', '16', '30']);
  assert.equal(text(find(brunhild, (v) => v.attrs.class === 'c-player')[0]), 'Ann');
  assert.equal(text(find(vesna, (v) => v.attrs.class === 'c-status')[0]), 'off-balance');
});

test('text stays text: markup in a name is a string child, never parsed', () => {
  const s = fight();
  s.party[0].name = '<img src=x onerror=alert(1)>';
  const name = find(panels.party(s), (v) => v.attrs.class === 'c-name')[0];
  assert.deepEqual(name.children, ['<img src=x onerror=alert(1)>']);
});

test('the action box obeys the server: only the player it says may act gets the box', () => {
  const s = fight();
  assert.deepEqual(panels.action(s, '2', live), { enabled: true, hint: 'Your turn! What do you do?', myTurn: true, marked: true });
  assert.deepEqual(panels.action(s, '1', live), { enabled: false, hint: 'Waiting for Vesna…', myTurn: false, marked: false });
  assert.deepEqual(panels.action(s, '', live), { enabled: false, hint: '', myTurn: false, marked: false });
});

test('the page does not re-derive the rules: the active PC the server holds back stays held back', () => {
  // The fight is ending: the initiative still points at Vesna, but the
  // server says she may not act (views.go turnOf).
  const s = fight();
  s.party[1].can_act = false;
  s.party[1].turn = 'waiting';
  const a = panels.action(s, '2', live);
  assert.equal(a.enabled, false);
  assert.equal(a.myTurn, false);
  // And one the server lets act is let act, whatever the page might think.
  s.party[0].can_act = true;
  s.party[0].turn = 'free';
  assert.equal(panels.action(s, '1', live).enabled, true);
});

test('the hint says why the box is closed', () => {
  const s = fight();
  s.busy = true;
  assert.deepEqual(panels.action(s, '2', live), { enabled: false, hint: 'The DM is resolving a turn…', myTurn: true, marked: false });
  s.party[1].can_act = false;
  s.party[1].turn = 'down';
  assert.equal(panels.action(s, '2', live).hint, 'You are down and cannot act.');
  assert.equal(panels.action(fight(), '2', { ...live, sending: true }).enabled, false);
  assert.deepEqual(panels.action(fight(), '2', { connected: false, everConnected: true, sending: false }).hint, 'Reconnecting… your seat is kept.');
  const timed = fight();
  timed.combat.deadline = '2026-01-01T00:01:00Z';
  assert.equal(panels.action(timed, '2', live, Date.parse('2026-01-01T00:00:15Z')).hint, 'Your turn! What do you do? (45s left)');
});

test('the combat bar names whose turn it is and your HP', () => {
  const bar = panels.combatBar(fight(), '2');
  assert.equal(bar.hidden, false);
  assert.equal(bar.mine, true);
  assert.equal(bar.children.map(text).join(' | '), 'Round 2 | Your turn! | Vesna 34/34 HP');
  assert.equal(panels.combatBar(fight(), '1').children.map(text).join(' | '), "Round 2 | Vesna's turn | Brunhild 30/45 HP");
  const calm = fight();
  calm.mode = 'narrative';
  calm.combat = null;
  assert.equal(panels.combatBar(calm, '1').hidden, true);
});

test('location and quests offer actions as buttons that fill the box', () => {
  const loc = panels.location(fight());
  assert.deepEqual(find(loc, (v) => v.tag === 'button').map((b) => b.attrs['data-fill']), ['go to back to the square', 'attack Snikket']);
  const q = panels.quests({ quests: [{ id: 'q', name: 'The Stolen Lantern', status: 'offered', description: 'Find it.', giver_name: 'Maren', reward_xp: 150, reward_gold: 50 }] });
  assert.equal(text(find(q, (v) => v.attrs.class === 'q-desc muted')[0]), 'Find it. From Maren. Reward: 150 XP, 50 gold.');
  assert.equal(text(find(panels.quests({}), (v) => v.tag === 'li')[0]), 'none yet');
});

test('notes list the facts, with a remove button for their author and the owner', () => {
  const s = { notes: [{ id: 'n1', text: 'The innkeeper is Bram.', by: 'p1', by_name: 'Ann' }, { id: 'n2', text: 'It snows.', by: 'p2' }] };
  const dels = (viewer) => find(panels.notes(s, viewer), (v) => v.attrs && v.attrs['data-note-del']).map((v) => v.attrs['data-note-del']);
  assert.deepEqual(dels({ playerId: 'p1' }), ['n1']);
  assert.deepEqual(dels({ playerId: 'p3', owner: true }), ['n1', 'n2']);
  assert.deepEqual(dels({}), []);
  assert.match(text(find(panels.notes(s), (v) => v.tag === 'li')[0]), /The innkeeper is Bram\. — Ann/);
  assert.equal(text(find(panels.notes({}), (v) => v.tag === 'li')[0]), 'No notes yet: facts the table agrees on, which the DM must honour.');
});

test('a quest names its giver once; a stat never wraps from its number', () => {
  assert.equal(panels.questText({ description: 'Return it to Maren Voss.', giver_name: 'Maren Voss' }), 'Return it to Maren Voss.');
  assert.equal(panels.questText({ description: 'Find it.', giver_name: 'Maren' }), 'Find it. From Maren.');
  const s = panels.statsText({ str: 16, agi: 12, con: 15, int: 9, wis: 10, cha: 10 });
  assert.equal(s, 'STR\u00a016 · AGI\u00a012 · CON\u00a015 · INT\u00a09 · WIS\u00a010 · CHA\u00a010');
});
