// The table page's side of PROTOCOL.md "Undo, notes and the owner's word
// to the DM": the notes form and its remove buttons, the thumbs up/down and edit
// buttons of narration lines, and the owner's controls (undo the last
// turn, whisper to the DM). The notes panel itself is drawn by panels.js
// from the state; the struck-through and edited lines by log.js.
//
// Whether the viewer owns the table comes from the server (GET /notes
// answers "owner"); the server checks every request again.

const $ = (id) => document.getElementById(id);

// renderUndo shows the owner's undo buttons only when the server would
// undo a turn (state.undoable, the save points left) and not while a
// turn runs, when it answers 409.
export function renderUndo(state) {
  const left = state.undoable || 0;
  for (const id of ['undo-turn', 'replay-turn']) {
    const b = $(id);
    if (!b) continue;
    b.hidden = left === 0;
    b.disabled = !!state.busy;
  }
  const undo = $('undo-turn');
  if (undo) undo.title = `Undo the last turn that resolved an action; the action is dropped (${left} turn${left === 1 ? '' : 's'} can be undone)`;
}

// dmTools wires the controls. deps: tableId, role() ("player" or
// "spectator"), api(method, path, body), send(frame) over the socket,
// newId(), showError(msg), and setOwner(bool), told once the server says
// whether the viewer owns the table. It returns {acked(id)}, which the
// page calls with the id of every `ack` frame.
export function dmTools(deps) {
  const { tableId, api, showError } = deps;
  const base = `/api/tables/${encodeURIComponent(tableId)}`;
  const page = $('table-page');
  let owner = false;

  const noteForm = $('note-form');
  const showForms = () => {
    if (noteForm) noteForm.hidden = !(owner || deps.role() === 'player');
    const tools = $('owner-tools');
    if (tools) tools.hidden = !owner;
    const whisper = $('whisper-form');
    if (whisper) whisper.hidden = !owner;
  };

  // A private table's page was opened with its invite, which lets a
  // spectator who is not seated read the notes too.
  const invite = page.dataset.invite || '';
  api('GET', `${base}/notes${invite ? `?invite=${encodeURIComponent(invite)}` : ''}`).then((res) => {
    owner = !!(res && res.owner);
    page.classList.toggle('is-owner', owner);
    deps.setOwner(owner);
    showForms();
  }).catch(() => showForms());

  if (noteForm) {
    noteForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      const input = $('note-text');
      const t = input.value.trim();
      if (!t) return;
      try {
        await api('POST', `${base}/notes`, { text: t });
        input.value = '';
      } catch (err) {
        showError(err.message);
      }
    });
  }

  const act = async (what, f) => {
    try {
      await f();
    } catch (err) {
      showError(`${what}: ${err.message}`);
    }
  };

  const retcon = (then) => act('Undo', async () => {
    const ask = then === 'retry' ? 'Undo the last turn and let the DM play the action again (same dice)?'
      : 'Undo the last turn and drop the action? The player may act anew.';
    if (!confirm(ask)) return;
    await api('POST', `${base}/retcon`, { then });
  });
  const undo = $('undo-turn');
  if (undo) undo.addEventListener('click', () => retcon('drop'));
  const replay = $('replay-turn');
  if (replay) replay.addEventListener('click', () => retcon('retry'));

  const whisperForm = $('whisper-form');
  const whispers = new Set(); // ids sent, not yet acked
  if (whisperForm) {
    whisperForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const input = $('whisper-text');
      const t = input.value.trim();
      const id = deps.newId();
      if (t && deps.send({ type: 'whisper', id, text: t })) {
        whispers.add(id);
        input.value = '';
      }
    });
  }

  page.addEventListener('click', (e) => {
    const del = e.target.closest('[data-note-del]');
    if (del) {
      act('Remove note', () => api('DELETE', `${base}/notes/${encodeURIComponent(del.dataset.noteDel)}`));
      return;
    }
    const fb = e.target.closest('[data-feedback]');
    if (fb) {
      const li = fb.closest('li[data-seq]');
      act('Feedback', async () => {
        await api('POST', `${base}/events/${li.dataset.seq}/feedback`, { score: Number(fb.dataset.feedback) });
        for (const b of li.querySelectorAll('[data-feedback]')) b.setAttribute('aria-pressed', b === fb ? 'true' : 'false');
      });
      return;
    }
    const ed = e.target.closest('[data-edit]');
    if (ed) {
      const li = ed.closest('li[data-seq]');
      const now = li.querySelector('.text').textContent;
      const t = prompt('Correct the narration:', now);
      if (t && t.trim() && t !== now) act('Edit', () => api('POST', `${base}/events/${ed.dataset.edit}/edit`, { text: t.trim() }));
    }
  });

  return {
    acked(id) {
      if (!whispers.delete(id)) return;
      const st = $('whisper-status');
      if (st) st.textContent = 'Whispered: the DM reads it on its next turn.';
    },
  };
}
