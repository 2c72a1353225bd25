// The fight's chips, the sheet's abilities and the DM's suggestions after
// a fight (panels.js), from a state as the server sends it.
// Run with `node --test web/static/`.

import assert from 'node:assert/strict';
import test from 'node:test';

import { text } from './dom.js';
import * as panels from './panels.js';
import { eventLine } from './eventline.js';

function find(v, pred, out = []) {
  if (Array.isArray(v)) v.forEach((x) => find(x, pred, out));
  else if (v && typeof v === 'object') {
    if (pred(v)) out.push(v);
    find(v.children, pred, out);
  }
  return out;
}

const abilities = [
  { id: 'firebolt', name: 'Firebolt', description: 'Fire.', target: 'enemy', uses: 1, max_uses: 1, recharge: 'turn' },
  { id: 'sleep', name: 'Sleep', description: 'Zzz.', target: 'enemy', uses: 0, max_uses: 1, recharge: 'long_rest' },
  { id: 'shield', name: 'Shield', description: 'Ward.', target: 'self', uses: 1, max_uses: 1, recharge: 'short_rest' },
];

// Sel the mage acts; Odo lies unconscious; Snikket and the archer stand.
function fight() {
  return {
    table: { combat_mode: 'tactical' },
    mode: 'combat',
    party: [
      { id: 'c1', name: 'Odo', seat: '1', hp: 0, max_hp: 12, statuses: ['unconscious'], can_act: false, turn: 'down', abilities: [] },
      { id: 'c2', name: 'Sel', seat: '2', hp: 5, max_hp: 7, statuses: [], can_act: true, turn: 'yours', abilities,
        inventory: [{ id: 'c2-kit-1', name: 'Healing potion', category: 'consumable' }] },
    ],
    npcs: [{ id: 'snikket', name: 'Snikket', hostile: true }, { id: 'goblin-archer', name: 'Rotfang archer', hostile: true }],
    combat: { round: 2, index: 2, initiative: [
      { id: 'dm', name: 'DM', kind: 'bookend' },
      { id: 'pc:1', name: 'Odo', kind: 'pc', statuses: ['unconscious'] },
      { id: 'pc:2', name: 'Sel', kind: 'pc' },
      { id: 'dm:snikket', name: 'Snikket', kind: 'npc', hp: 9, max_hp: 14 },
      { id: 'dm:goblin-archer', name: 'Rotfang archer', kind: 'npc', hp: 4, max_hp: 8 },
    ] },
  };
}

test('in a fight the chips offer targets, attack, each ability with its uses, a potion for the fallen and defend', () => {
  const chips = panels.fightChips(fight(), '2', '');
  const buttons = find(chips, (v) => v.tag === 'button');
  const fills = buttons.map((b) => b.attrs['data-fill'] || `[target ${b.attrs['data-target']}]`);
  assert.deepEqual(fills, [
    '[target dm:snikket]', '[target dm:goblin-archer]',
    'attack Snikket', 'Firebolt on Snikket', 'Sleep on Snikket', 'Shield',
    'give my healing potion to Odo', 'defend',
  ]);
  const sleep = buttons.find((b) => b.attrs['data-ability'] === 'sleep');
  assert.equal(sleep.attrs.disabled, '', 'a spent ability is disabled');
  assert.match(sleep.attrs.title, /long rest/);
  assert.equal(text(sleep), 'Sleep 0/1');
});

test('tapping a foe aims the chips at it and marks it in the tracker', () => {
  const chips = panels.fightChips(fight(), '2', 'dm:goblin-archer');
  const fills = find(chips, (v) => v.tag === 'button').map((b) => b.attrs['data-fill']).filter(Boolean);
  assert.ok(fills.includes('Firebolt on Rotfang archer') && fills.includes('attack Rotfang archer'), fills.join(' | '));
  const entries = find(panels.combatPanel(fight(), '2', 'dm:goblin-archer'), (v) => v.tag === 'li');
  assert.deepEqual(entries.filter((li) => li.attrs.class.includes('targeted')).map((li) => li.attrs['data-entry']), ['dm:goblin-archer']);
});

test('no chips for a spectator, out of a fight, or for one who may not act', () => {
  assert.deepEqual(panels.fightChips(fight(), '', ''), []);
  assert.deepEqual(panels.fightChips(fight(), '1', ''), []);
  assert.deepEqual(panels.fightChips({ ...fight(), mode: 'narrative' }, '2', ''), []);
});

test('the sheet lists the abilities with their uses', () => {
  const sheet = panels.sheet(fight(), '2');
  const items = find(sheet, (v) => v.tag === 'li' && v.attrs['data-ability']);
  assert.deepEqual(items.map((li) => text(li)), ['Firebolt1/1every turn', 'Sleep0/1long rest', 'Shield1/1short rest']);
});

test('after a win the DM suggests loot and a rest; after a wipe a long rest and the way out', () => {
  const s = { ...fight(), mode: 'narrative', location: { exits: [{ to: 'square', name: 'the river path' }, { to: 'x', name: 'the ford' }, { to: 'y', name: 'the weir' }] } };
  s.last_combat_result = { outcome: 'player_win', loot: ['Tin crown'], defeated: ['Snikket'] };
  assert.deepEqual(panels.afterFight(s, '2'), ['loot the bodies', 'we take a short rest']);
  s.last_combat_result = { outcome: 'player_die', loot: [], defeated: [] };
  assert.deepEqual(panels.afterFight(s, '2'), ['we camp for the night', 'go to the river path', 'go to the ford']);
  assert.deepEqual(panels.afterFight(fight(), '2'), [], 'nothing during a fight');
});

test('the log shows an ability used, on whom and the uses left', () => {
  assert.deepEqual(eventLine({ kind: 'ability', data: { actor: 'Sel', ability: 'magic_missile', target: 'Snikket', uses_left: 1 } }),
    { who: 'Sel', text: 'uses magic missile on Snikket (1 use left)' });
  assert.deepEqual(eventLine({ kind: 'ability', data: { actor: 'Odo', ability: 'shield_wall', uses_left: 0 } }),
    { who: 'Odo', text: 'uses shield wall (0 uses left)' });
});
