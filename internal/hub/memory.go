package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// summaryTimeout bounds the summary of an archived block; past it the
// summary is extractive and the turn goes on.
const summaryTimeout = 60 * time.Second

// historyCache is a table's live history window: each agent's
// active (not archived) messages, decoded, and its last memories. It is
// read from the store on a table's first turn after it loads, then kept up
// to date from what each committed turn adds (remember) and from archiving,
// so a turn no longer reads and decodes its history from SQLite. mu
// serialises the turn job that reads it with the table goroutine that
// appends to it and with invalidate.
type historyCache struct {
	mu     sync.Mutex
	agents map[string]*agentHistory
}

// agentHistory is one agent's part of the cache.
type agentHistory struct {
	active []agent.Message // every active message, oldest first
	// bare holds active's contents with past turns' state blocks already
	// removed (agent.StripContext), which the context then finds clean:
	// the regexp ran on every message of every turn's window.
	bare []string
	mems []store.Memory // the last Summaries memories, oldest first
}

// add appends decoded messages to the history.
func (a *agentHistory) add(msgs []agent.Message) {
	for _, m := range msgs {
		a.active = append(a.active, m)
		bare := m.Content
		if m.Role == "user" {
			bare = agent.StripContext(bare)
		}
		a.bare = append(a.bare, bare)
	}
}

// window returns keep, a suffix of active, with the stripped contents.
func (a *agentHistory) window(keep []agent.Message) []agent.Message {
	out := append([]agent.Message(nil), keep...)
	off := len(a.active) - len(keep)
	for i := range out {
		out[i].Content = a.bare[off+i]
	}
	return out
}

// historyContext returns the history an agent sees on a turn (DESIGN.md
// "History"): the last memory summaries, then the recent window. It writes
// nothing: the archive a full window calls for is made at the end of the
// turn that fills it (archiveAfter) and written with that turn's commit,
// so this turn's window already starts after it. Should the history still
// be too long (a window setting changed), the oldest turns are left out of
// the window and archived at the end of this turn.
func (t *table) historyContext(ctx context.Context, agentName string) ([]agent.Message, error) {
	cfg := t.h.cfg.Runner.Window.WithDefaults()
	c := &t.hist
	c.mu.Lock()
	defer c.mu.Unlock()
	a, err := t.loadHistory(ctx, agentName)
	if err != nil {
		return nil, err
	}
	_, keep := cfg.Split(windowOf(a.active, t.h.historyLimit()))
	return cfg.Context(a.mems, a.window(keep), t.log), nil
}

// archiveAfter returns the memory a turn that adds msgs (turn turnNo) to
// agentName's history must archive, or nil: the oldest whole turns of the
// active history that no longer fit the window, summarised by the summary
// model (or extractively). The turn's commit carries it (store.Commit's
// Archive), so the turn and its archive are durable together or not at
// all; archived then updates the cache. Called by the turn job.
func (t *table) archiveAfter(ctx context.Context, agentName string, turnNo int, msgs []agent.Message) *store.Memory {
	if len(msgs) == 0 {
		return nil
	}
	r := t.h.cfg.Runner
	cfg := r.Window.WithDefaults()
	c := &t.hist
	c.mu.Lock()
	a, err := t.loadHistory(ctx, agentName)
	var active []agent.Message
	if err == nil {
		// A copy with room for the turn's messages: the cache's own
		// slice is shared with the turns that read it.
		active = make([]agent.Message, len(a.active), len(a.active)+len(msgs))
		copy(active, a.active)
	}
	c.mu.Unlock()
	if err != nil {
		t.log.Warn("archive history", "agent", agentName, "err", err)
		return nil // archived with a later turn
	}
	for _, m := range msgs {
		m.Turn = turnNo
		active = append(active, m)
	}
	block, _ := cfg.Split(windowOf(active, t.h.historyLimit()))
	if len(block) == 0 {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, summaryTimeout)
	m := r.Summarize(sctx, agentName, block)
	cancel()
	m.TableID = t.id
	return &m
}

// archiving brings the cache in line with a turn whose commit carries m
// (nil: none) and is queued, once remember has added the turn's messages:
// the messages m archives leave the window at once, so a turn that starts
// before the commit lands does not see them, nor archive them again.
// archived adds m itself once the store gave it its id. If the commit
// could not be queued (err), the cache is read again next turn. Called on
// the table goroutine.
func (t *table) archiving(m *store.Memory, err error) {
	if m == nil {
		return
	}
	if err != nil {
		// The store holds neither the turn nor the archive, but the
		// archive may have failed because the cache was wrong: read it
		// again next turn.
		t.hist.forget(m.Agent)
		return
	}
	t.hist.update(m.Agent, func(a *agentHistory) {
		// As the store does: every active message up to the last
		// archived turn goes into the memory.
		i := 0
		for i < len(a.active) && a.active[i].Turn <= m.LastTurn {
			i++
		}
		a.active = append([]agent.Message(nil), a.active[i:]...)
		a.bare = append([]string(nil), a.bare[i:]...)
	})
}

// archived adds memory m, committed, to the cache's summaries. Called on
// the table goroutine when the turn that carried it settles.
func (t *table) archived(m *store.Memory) {
	if m == nil {
		return
	}
	keep := t.h.cfg.Runner.Window.WithDefaults().Summaries
	t.hist.update(m.Agent, func(a *agentHistory) {
		a.mems = append(a.mems, *m)
		if over := len(a.mems) - keep; over > 0 {
			a.mems = append([]store.Memory(nil), a.mems[over:]...)
		}
	})
}

// update runs f on agentName's cached history under the cache's lock; a
// history not loaded is left alone (the next turn reads the store).
func (c *historyCache) update(agentName string, f func(a *agentHistory)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.agents[agentName]; ok {
		f(a)
	}
}

// forget drops agentName's cached history: the next turn reads it again.
func (c *historyCache) forget(agentName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.agents, agentName)
}

// loadHistory returns the cached history of agentName, reading it from
// the store the first time. c.mu is held.
func (t *table) loadHistory(ctx context.Context, agentName string) (*agentHistory, error) {
	c := &t.hist
	if a, ok := c.agents[agentName]; ok {
		return a, nil
	}
	cfg := t.h.cfg.Runner.Window.WithDefaults()
	rows, err := t.h.cfg.Store.ActiveHistory(ctx, t.id, agentName, 0)
	if err != nil {
		return nil, err
	}
	mems, err := t.h.cfg.Store.Memories(ctx, t.id, agentName, cfg.Summaries)
	if err != nil {
		return nil, err
	}
	a := &agentHistory{mems: mems}
	a.add(decodeTurns(rows, t.log))
	if c.agents == nil {
		c.agents = map[string]*agentHistory{}
	}
	c.agents[agentName] = a
	return a, nil
}

// remember adds the messages agentName's committed turn turnNo stored to
// the cache: the turn's own values, not the stored bodies decoded again.
func (t *table) remember(agentName string, turnNo int, msgs []agent.Message) {
	if len(msgs) == 0 {
		return
	}
	turn := make([]agent.Message, len(msgs))
	for i, m := range msgs {
		m.Turn = turnNo
		turn[i] = m
	}
	t.hist.update(agentName, func(a *agentHistory) { a.add(turn) })
}

// invalidate drops the cache: the next turn reads the history again (after
// a memory changed behind the table's back).
func (c *historyCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.agents = nil
}

// historyLimit is how many active messages a turn's window is cut from: at
// least 4× the window's MaxMessages, so archiving can see a full block.
func (h *Hub) historyLimit() int {
	return max(h.cfg.HistoryWindow, 4*h.cfg.Runner.Window.WithDefaults().MaxMessages)
}

// windowOf returns the last limit messages of active (all when limit <= 0
// or there are fewer), never starting in the middle of a turn: what the
// store's ActiveHistory answers for the same limit.
func windowOf(active []agent.Message, limit int) []agent.Message {
	if limit <= 0 || len(active) <= limit {
		return active
	}
	before := active[len(active)-limit-1]
	out := active[len(active)-limit:]
	for len(out) > 0 && out[0].Turn == before.Turn {
		out = out[1:]
	}
	return out
}

// storeContext builds an agent's context from the store alone, archiving
// nothing: what historyContext answered before the cache, for tests and the
// benchmark comparing the two.
func (h *Hub) storeContext(ctx context.Context, tableID, agentName string, log *slog.Logger) ([]agent.Message, error) {
	cfg := h.cfg.Runner.Window.WithDefaults()
	rows, err := h.cfg.Store.ActiveHistory(ctx, tableID, agentName, h.historyLimit())
	if err != nil {
		return nil, err
	}
	_, keep := cfg.Split(decodeTurns(rows, log))
	mems, err := h.cfg.Store.Memories(ctx, tableID, agentName, cfg.Summaries)
	if err != nil {
		return nil, err
	}
	return cfg.Context(mems, keep, log), nil
}

// decodeTurns decodes stored messages with their turn numbers; bodies that
// do not decode are dropped with a warning.
func decodeTurns(rows []store.AgentMessage, log *slog.Logger) []agent.Message {
	out := agent.DecodeMessages(rows)
	if n := len(rows) - len(out); n > 0 {
		log.Warn("history: dropped undecodable messages", "count", n)
	}
	return out
}

// readRecords is what only the owner may do with the DM's records
// (histories, memories, the call log): they hold what players must not
// see, such as NPC secrets. A private table the player may not see is
// ENOTFOUND (ownerOf).
const readRecords = "read the DM's records"

// Memories returns the memories of a table, oldest first, for its owner.
func (h *Hub) Memories(ctx context.Context, tableID, playerID string) ([]store.Memory, error) {
	if _, err := h.ownerOf(tableID, playerID, readRecords); err != nil {
		return nil, err
	}
	return h.cfg.Store.Memories(ctx, tableID, "", 0)
}

// SearchMemories searches the memories of a table (full text), best
// first, for its owner.
func (h *Hub) SearchMemories(ctx context.Context, tableID, playerID, query string, limit int) ([]store.Memory, error) {
	if _, err := h.ownerOf(tableID, playerID, readRecords); err != nil {
		return nil, err
	}
	return h.cfg.Store.SearchMemories(ctx, tableID, query, limit)
}

// sessionTranscriptMax bounds the transcript of one session read through
// the API: far above any archived block, it only guards the response size.
const sessionTranscriptMax = 1 << 20

// Session is one archived session as the table's owner reads it: the
// memory, its messages (OpenAI format, oldest first) and a readable
// transcript of them. Its JSON is what the API answers for one session.
type Session struct {
	Memory     store.Memory    `json:"memory"`
	Messages   []agent.Message `json:"messages"`
	Transcript string          `json:"transcript"`
}

// MemorySession returns one memory of a table with its archived messages
// and their transcript, for its owner. ENOTFOUND if there is no such
// memory.
func (h *Hub) MemorySession(ctx context.Context, tableID, playerID string, id int64) (Session, error) {
	if _, err := h.ownerOf(tableID, playerID, readRecords); err != nil {
		return Session{}, err
	}
	m, rows, err := h.cfg.Store.MemorySession(ctx, tableID, id)
	if err != nil {
		return Session{}, err
	}
	msgs := agent.DecodeMessages(rows)
	return Session{Memory: m, Messages: msgs, Transcript: agent.Transcript(msgs, sessionTranscriptMax)}, nil
}

// SummarizeSession summarises one archived session again with the
// summary model (extractively if there is none or it fails), stores the
// new title, summary and keywords and returns the memory. For the table's
// owner.
func (h *Hub) SummarizeSession(ctx context.Context, tableID, playerID string, id int64) (store.Memory, error) {
	if _, err := h.ownerOf(tableID, playerID, readRecords); err != nil {
		return store.Memory{}, err
	}
	m, rows, err := h.cfg.Store.MemorySession(ctx, tableID, id)
	if err != nil {
		return store.Memory{}, err
	}
	sctx, cancel := context.WithTimeout(agent.WithTable(ctx, tableID), summaryTimeout)
	defer cancel()
	s := h.cfg.Runner.Summarize(sctx, m.Agent, agent.DecodeMessages(rows))
	m.Title, m.Summary, m.Keywords, m.Source = s.Title, s.Summary, s.Keywords, s.Source
	if err := h.cfg.Store.UpdateMemory(ctx, m); err != nil {
		return store.Memory{}, err
	}
	if t, err := h.table(tableID); err == nil {
		t.hist.invalidate() // the cached memory has the old summary
	}
	return m, nil
}

// ExportHistory returns an agent's whole history at a table (archived
// messages included), one OpenAI-format chat message per element, oldest
// first, for the table's owner. agentName must be narrative or combat.
func (h *Hub) ExportHistory(ctx context.Context, tableID, playerID, agentName string) ([]json.RawMessage, error) {
	if agentName != engine.AgentNarrative && agentName != engine.AgentCombat {
		return nil, engine.Errorf(engine.EINVALID, "No history %q: narrative or combat.", agentName)
	}
	if _, err := h.ownerOf(tableID, playerID, readRecords); err != nil {
		return nil, err
	}
	rows, err := h.cfg.Store.AllHistory(ctx, tableID, agentName)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Body)
	}
	return out, nil
}

// Calls returns the last model calls of a table, newest first, for its
// owner.
func (h *Hub) Calls(ctx context.Context, tableID, playerID string, limit int) ([]store.LLMCall, error) {
	if _, err := h.ownerOf(tableID, playerID, readRecords); err != nil {
		return nil, err
	}
	return h.cfg.Store.Calls(ctx, tableID, limit)
}
