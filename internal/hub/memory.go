package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// summaryTimeout bounds the summary of an archived block; past it the
// summary is extractive and the turn goes on.
const summaryTimeout = 60 * time.Second

// historyContext returns the history an agent sees on a turn (DESIGN.md
// "History"): the last memory summaries, then the recent window. When the
// active history has outgrown the window, its oldest whole turns are first
// archived into a memory — summarised by the summary model, or
// extractively — in their own transaction. Archiving only regroups
// committed messages, so a turn that fails afterwards leaves nothing
// partial; if archiving fails, the turn still gets a valid window.
func (h *Hub) historyContext(ctx context.Context, tableID, agentName string, log *slog.Logger) ([]agent.Message, error) {
	r := h.cfg.Runner
	cfg := r.Window.WithDefaults()
	rows, err := h.cfg.Store.ActiveHistory(ctx, tableID, agentName, max(h.cfg.HistoryWindow, 4*cfg.MaxMessages))
	if err != nil {
		return nil, err
	}
	archive, keep := cfg.Split(decodeTurns(rows, log))
	if len(archive) > 0 {
		sctx, cancel := context.WithTimeout(ctx, summaryTimeout)
		m := r.Summarize(sctx, agentName, archive)
		cancel()
		m.TableID = tableID
		if _, err := h.cfg.Store.ArchiveHistory(ctx, m); err != nil {
			log.Warn("archive history", "agent", agentName, "turns", m.LastTurn, "err", err)
		}
	}
	mems, err := h.cfg.Store.Memories(ctx, tableID, agentName, cfg.Summaries)
	if err != nil {
		log.Warn("load memories", "agent", agentName, "err", err)
		mems = nil
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

// ownerOnly returns an EFORBIDDEN error unless playerID owns the table.
// The DM's records (histories, memories, the call log) hold what players
// must not see, such as NPC secrets.
func (h *Hub) ownerOnly(tableID, playerID string) error {
	t, err := h.table(tableID)
	if err != nil {
		return err
	}
	// meta never changes after the table is created.
	if t.meta.OwnerID == "" || t.meta.OwnerID != playerID {
		return engine.Errorf(engine.EFORBIDDEN, "Only the table's owner may read the DM's records.")
	}
	return nil
}

// Memories returns the memories of a table, oldest first, for its owner.
func (h *Hub) Memories(ctx context.Context, tableID, playerID string) ([]store.Memory, error) {
	if err := h.ownerOnly(tableID, playerID); err != nil {
		return nil, err
	}
	return h.cfg.Store.Memories(ctx, tableID, "", 0)
}

// SearchMemories searches the memories of a table (full text), best
// first, for its owner.
func (h *Hub) SearchMemories(ctx context.Context, tableID, playerID, query string, limit int) ([]store.Memory, error) {
	if err := h.ownerOnly(tableID, playerID); err != nil {
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
	if err := h.ownerOnly(tableID, playerID); err != nil {
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
	if err := h.ownerOnly(tableID, playerID); err != nil {
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
	return m, nil
}

// ExportHistory returns an agent's whole history at a table (archived
// messages included), one OpenAI-format chat message per element, oldest
// first, for the table's owner. agentName must be narrative or combat.
func (h *Hub) ExportHistory(ctx context.Context, tableID, playerID, agentName string) ([]json.RawMessage, error) {
	if agentName != engine.AgentNarrative && agentName != engine.AgentCombat {
		return nil, engine.Errorf(engine.EINVALID, "No history %q: narrative or combat.", agentName)
	}
	if err := h.ownerOnly(tableID, playerID); err != nil {
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
	if err := h.ownerOnly(tableID, playerID); err != nil {
		return nil, err
	}
	return h.cfg.Store.Calls(ctx, tableID, limit)
}
