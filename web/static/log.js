// The table page's log: the story as numbered events, and the narration
// streaming in. Each line's words come from eventline.js, the one renderer
// of an event line, for the events the page ships and the live ones alike.
//
// A `retcon` event strikes through the lines of the turn it undid (they
// stay), and an `edit` event rewrites its narration's line (PROTOCOL.md
// "Undo, notes and the owner's word to the DM"); both are remembered, so
// lines loaded later read the same.

import { h, mount } from './dom.js';
import { eventLine } from './eventline.js';

// The log keeps at most this many lines (older ones can be loaded again).
const maxLines = 500;

// Kinds a retcon never retracts: they are not the DM's turn.
const kept = new Set(['chat', 'player_joined', 'player_left', 'note', 'note_removed', 'edit', 'retcon']);

// retracts reports whether retcon data r retracts event ev (as
// engine.RetconData.Retracted decides for the story export).
export function retracts(r, ev) {
  const d = ev.data || {};
  if (ev.kind === 'action' && r.then === 'drop' && r.action_id && d.action_id === r.action_id) return true;
  return ev.seq >= r.from_seq && ev.seq <= r.to_seq && !kept.has(ev.kind);
}

// item describes the log line of ev, or null for an event the log does
// not show. characterName(id) names a party member; opts.feedback adds
// the thumbs up/down and edit buttons to narration lines (table.js shows them to
// whom they are for).
export function item(ev, characterName, opts = {}) {
  const l = eventLine(ev, characterName);
  if (!l) return null;
  const tools = ev.kind === 'narration' && opts.tools ? h('span', { class: 'line-tools' },
    h('button', { type: 'button', class: 'link fb', 'data-feedback': '1', title: 'A good narration', 'aria-label': 'Good narration' }),
    h('button', { type: 'button', class: 'link fb', 'data-feedback': '-1', title: 'A poor narration', 'aria-label': 'Poor narration' }),
    h('button', { type: 'button', class: 'link edit-narration', 'data-edit': ev.seq, title: 'Correct this narration' }, 'edit')) : null;
  return h('li', { class: `ev ev-${ev.kind}${l.outcome ? ' outcome-' + l.outcome : ''}`, 'data-seq': ev.seq, 'data-kind': ev.kind },
    l.who ? [h('strong', { class: 'who' }, l.who), h('span', { class: 'text' }, ': ' + l.text)] : h('span', { class: 'text' }, l.text), tools);
}

// Log shows events in the <ol> el; characterName names party members.
export class Log {
  constructor(el, characterName, opts = {}) {
    this.el = el;
    this.name = characterName;
    this.opts = opts;
    this.retcons = []; // retcon data seen, oldest first
    this.edits = new Map(); // narration seq -> corrected text
    this.events = new Map(); // seq -> event, for the lines shown
  }

  // remember records what retcon and edit events change.
  remember(evs) {
    for (const ev of evs) {
      if (ev.kind === 'retcon' && ev.data) this.retcons.push(ev.data);
      if (ev.kind === 'edit' && ev.data) this.edits.set(ev.data.seq, ev.data.text);
    }
  }

  // mark strikes through li (event ev) if a retcon retracted it, and shows
  // its narration's last edit.
  mark(li, ev) {
    li.classList.toggle('retracted', this.retcons.some((r) => retracts(r, ev)));
    if (ev.kind === 'narration' && this.edits.has(ev.seq)) {
      li.querySelector('.text').textContent = this.edits.get(ev.seq);
      li.classList.add('edited');
    }
  }

  nodes(evs) {
    this.remember(evs);
    const out = [];
    for (const ev of evs) {
      const v = item(ev, this.name, this.opts);
      if (!v) continue;
      const li = mount(v);
      this.events.set(ev.seq, ev);
      this.mark(li, ev);
      out.push(li);
    }
    return out;
  }

  // remark applies what a live retcon or edit changes to the lines shown.
  remark() {
    for (const li of this.el.querySelectorAll('li[data-seq]')) {
      const ev = this.events.get(Number(li.dataset.seq));
      if (ev) this.mark(li, ev);
    }
  }

  nearBottom() {
    return this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 80;
  }

  // reset shows evs and scrolls to the end.
  reset(evs) {
    this.el.replaceChildren(...this.nodes(evs));
    this.el.scrollTop = this.el.scrollHeight;
  }

  // append adds a live event, keeping the view at the end if it was there.
  append(ev) {
    const [li] = this.nodes([ev]);
    if (ev.kind === 'retcon' || ev.kind === 'edit') this.remark();
    if (!li) return;
    const stick = this.nearBottom();
    const streaming = this.el.querySelector('#narrating');
    // The next turn may stream while this one's narration is being saved:
    // only the narration of the streaming turn ends it.
    const ends = ev.kind === 'narration' || ev.kind === 'system';
    if (streaming && ends && (!ev.turn || streaming.dataset.turn === ev.turn)) streaming.remove();
    this.el.insertBefore(li, this.el.querySelector('#narrating'));
    while (this.el.children.length > maxLines) {
      this.events.delete(Number(this.el.firstElementChild.dataset.seq));
      this.el.firstElementChild.remove();
    }
    if (stick) this.el.scrollTop = this.el.scrollHeight;
  }

  // prepend puts earlier events on top without moving what the reader sees.
  prepend(evs) {
    const before = this.el.scrollHeight;
    this.el.prepend(...this.nodes(evs));
    this.el.scrollTop += this.el.scrollHeight - before;
  }

  // delta adds streamed narration of turn f.turn to its own line.
  delta(f) {
    let li = this.el.querySelector('#narrating');
    if (!li || li.dataset.turn !== f.turn) {
      if (li) li.remove();
      li = mount(h('li', { id: 'narrating', class: 'ev ev-narration streaming', 'data-turn': f.turn || '' },
        h('em', { class: 'who' }, 'DM is narrating… '), h('span', { class: 'text' }, '')));
      this.el.append(li);
    }
    const stick = this.nearBottom();
    li.querySelector('.text').textContent += f.text || '';
    if (stick) this.el.scrollTop = this.el.scrollHeight;
  }

  // withdraw drops the narration streamed for turn f.turn: the attempt
  // that wrote it failed, and the next one streams its own.
  withdraw(f) {
    const li = this.el.querySelector('#narrating');
    if (li && li.dataset.turn === (f.turn || '')) li.remove();
  }
}
