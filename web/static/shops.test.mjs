// node --test web/static/: the shop panel shows stock with prices to
// everyone, and sell offers only for the viewer's own items.
import test from 'node:test';
import assert from 'node:assert/strict';
import { shops } from './panels.js';

const state = {
  party: [{ id: 'c1', seat: '1', name: 'Ann' }, { id: 'c2', seat: '2', name: 'Bo' }],
  shops: [{
    keeper: 'pell', keeper_name: 'Pell', name: "Pell's chandlery", buys_at: 50, buys: ['consumable'],
    stock: [{ item: 'pell-bread-1', name: 'Bread', price: 1 }],
    offers: [{ item: 'k1', name: 'Healing potion', character: 'c1', price: 12 }, { item: 'k2', name: 'Bandage', character: 'c2', price: 1 }],
  }],
};

const text = (n) => (typeof n === 'string' ? n : (n.children || []).map(text).join(''));
const find = (nodes, pred, out = []) => {
  for (const n of nodes) {
    if (!n || typeof n === 'string') continue;
    if (pred(n)) out.push(n);
    find(n.children || [], pred, out);
  }
  return out;
};

test('a seated player sees prices, buy chips and offers for their own items', () => {
  const nodes = shops(state, '1');
  const fills = find(nodes, (n) => n.attrs && n.attrs['data-fill']).map((n) => n.attrs['data-fill']);
  assert.deepEqual(fills, ['buy Bread from Pell', 'sell Healing potion to Pell']);
  const all = nodes.map(text).join(' ');
  assert.match(all, /1 gold/);
  assert.match(all, /Pell pays 50% of an item's price for consumable/);
  assert.match(all, /12 gold/);
});

test('a spectator sees the stock but no chips', () => {
  const nodes = shops(state, '');
  assert.equal(find(nodes, (n) => n.attrs && n.attrs['data-fill']).length, 0);
  assert.match(nodes.map(text).join(' '), /Bread/);
});

test('no shop here, no panel', () => {
  assert.deepEqual(shops({ party: [] }, '1'), []);
});
