// Page content as plain objects, and the one way they become DOM nodes.
//
// h() builds a node description: {tag, attrs, children}, where a child is
// a string or another node. mount() turns it into elements. Text only ever
// becomes a text node, never markup: player and model text cannot inject
// anything. Being plain data, a panel can be read in `node --test` without
// a browser (panels.test.mjs).

// h describes an element. Attributes that are undefined, null or false
// are left out; true is an empty attribute. Children that are undefined,
// null or false are left out; arrays are flattened; numbers become text.
export function h(tag, attrs, ...children) {
  const a = {};
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    a[k] = v === true ? '' : String(v);
  }
  const kids = [];
  const add = (c) => {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else kids.push(typeof c === 'number' ? String(c) : c);
  };
  children.forEach(add);
  return { tag, attrs: a, children: kids };
}

// mount makes the DOM node that v describes, in doc.
export function mount(v, doc = document) {
  if (typeof v === 'string') return doc.createTextNode(v);
  const e = doc.createElement(v.tag);
  for (const [k, val] of Object.entries(v.attrs)) e.setAttribute(k, val);
  for (const c of v.children) e.append(mount(c, doc));
  return e;
}

// text is the text a node description shows, as textContent would read it.
export function text(v) {
  return typeof v === 'string' ? v : v.children.map(text).join('');
}
