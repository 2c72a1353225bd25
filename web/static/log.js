// The table page's log: the story as numbered events, and the narration
// streaming in. Each line's words come from eventline.js, the one renderer
// of an event line, for the events the page ships and the live ones alike.

import { h, mount } from './dom.js';
import { eventLine } from './eventline.js';

// The log keeps at most this many lines (older ones can be loaded again).
const maxLines = 500;

// item describes the log line of ev, or null for an event the log does
// not show. characterName(id) names a party member.
export function item(ev, characterName) {
  const l = eventLine(ev, characterName);
  if (!l) return null;
  return h('li', { class: `ev ev-${ev.kind}${l.outcome ? ' outcome-' + l.outcome : ''}`, 'data-seq': ev.seq },
    l.who ? [h('strong', { class: 'who' }, l.who), h('span', { class: 'text' }, ': ' + l.text)] : h('span', { class: 'text' }, l.text));
}

// Log shows events in the <ol> el; characterName names party members.
export class Log {
  constructor(el, characterName) {
    this.el = el;
    this.name = characterName;
  }

  nodes(evs) {
    return evs.map((ev) => item(ev, this.name)).filter(Boolean).map((v) => mount(v));
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
    if (!li) return;
    const stick = this.nearBottom();
    const streaming = this.el.querySelector('#narrating');
    // The next turn may stream while this one's narration is being saved:
    // only the narration of the streaming turn ends it.
    const ends = ev.kind === 'narration' || ev.kind === 'system';
    if (streaming && ends && (!ev.turn || streaming.dataset.turn === ev.turn)) streaming.remove();
    this.el.insertBefore(li, this.el.querySelector('#narrating'));
    while (this.el.children.length > maxLines) this.el.firstElementChild.remove();
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
