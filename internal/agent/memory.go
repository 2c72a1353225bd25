package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// MemoryIndex is what the memory tools read. internal/db satisfies it.
// Implementations must be safe for concurrent use.
type MemoryIndex interface {
	// SearchMemories returns up to limit memories of a table matching the
	// words of query (full-text), best first.
	SearchMemories(ctx context.Context, tableID, query string, limit int) ([]store.Memory, error)
	// MemorySession returns one memory of a table and its archived
	// messages, or an engine ENOTFOUND error.
	MemorySession(ctx context.Context, tableID string, id int64) (store.Memory, []store.AgentMessage, error)
}

type tableKey struct{}

// WithTable returns ctx carrying the id of the table a turn is played at;
// the memory tools and the call log read it.
func WithTable(ctx context.Context, tableID string) context.Context {
	return context.WithValue(ctx, tableKey{}, tableID)
}

// TableFrom returns the table id carried by ctx, or "".
func TableFrom(ctx context.Context) string {
	s, _ := ctx.Value(tableKey{}).(string)
	return s
}

// memoryTools returns the tools search_memories and
// recall_session_details over idx, or none when idx is nil. Each call
// reads the memories of the table its ctx carries (see WithTable).
func memoryTools(idx MemoryIndex) []*Tool {
	if idx == nil {
		return nil
	}
	return []*Tool{searchMemoriesTool(idx), recallSessionTool(idx)}
}

func searchMemoriesTool(idx MemoryIndex) *Tool {
	search := &Tool{
		Name:        "search_memories",
		Description: "Search the summaries of earlier sessions at this table (archived history) by keywords: names, places, items, events. Returns session ids with titles and summaries.",
		Parameters: object([]string{"query"}, map[string]any{
			"query": str("Words to look for, e.g. \"Snikket lantern\"."),
		}),
	}
	search.Run = func(ctx context.Context, tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Query string `json:"query"`
		}
		if err := decode(search, args, &a); err != nil {
			return "", err
		}
		ms, err := idx.SearchMemories(ctx, TableFrom(ctx), a.Query, 5)
		if err != nil {
			return "", engine.Errorf(engine.EINTERNAL, "search memories: %v", err)
		}
		if len(ms) == 0 {
			return "No memory matches " + a.Query + ".", nil
		}
		type hit struct {
			Session  int64    `json:"session_id"`
			Turns    string   `json:"turns"`
			Title    string   `json:"title"`
			Summary  string   `json:"summary"`
			Keywords []string `json:"keywords"`
		}
		out := []hit{}
		for _, m := range ms {
			out = append(out, hit{m.ID, fmt.Sprintf("%d-%d", m.FirstTurn, m.LastTurn), m.Title, m.Summary, m.Keywords})
		}
		return toolResult(out), nil
	}
	return search
}

func recallSessionTool(idx MemoryIndex) *Tool {
	recall := &Tool{
		Name:        "recall_session_details",
		Description: "Get the full record of one earlier session (from search_memories or the memories above): its summary and what was said and done, turn by turn.",
		Parameters: object([]string{"session_id"}, map[string]any{
			"session_id": map[string]any{"type": "integer", "description": "The session id."},
		}),
	}
	recall.Run = func(ctx context.Context, tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Session int64 `json:"session_id"`
		}
		if err := decode(recall, args, &a); err != nil {
			return "", err
		}
		m, rows, err := idx.MemorySession(ctx, TableFrom(ctx), a.Session)
		msgs := DecodeMessages(rows)
		if engine.ErrorCode(err) == engine.ENOTFOUND {
			return "", errf("There is no session %d; use search_memories to find session ids.", a.Session)
		}
		if err != nil {
			return "", engine.Errorf(engine.EINTERNAL, "recall session: %v", err)
		}
		return toolResult(map[string]any{
			"session_id": m.ID, "turns": fmt.Sprintf("%d-%d", m.FirstTurn, m.LastTurn), "title": m.Title,
			"summary": m.Summary, "keywords": m.Keywords, "transcript": Transcript(msgs, 6000),
		}), nil
	}
	return recall
}

// turnHead returns the head line of a turn's user message after its
// "Turn N. ", as `^Turn \d+\. ([^\n]*)` would capture it (a scan: the
// expression was a third of the cost of a transcript).
func turnHead(content string) (string, bool) {
	rest, ok := strings.CutPrefix(content, "Turn ")
	digits := 0
	for digits < len(rest) && '0' <= rest[digits] && rest[digits] <= '9' {
		digits++
	}
	if !ok || digits == 0 {
		return "", false
	}
	if rest, ok = strings.CutPrefix(rest[digits:], ". "); !ok {
		return "", false
	}
	line, _, _ := strings.Cut(rest, "\n")
	return line, true
}

// Transcript renders messages as short readable lines — who acted, what
// they said, which tools ran, the narration — at most max bytes (cut at a
// line). It reads the turn structure of this package's user messages and
// output tools; the state blocks are left out.
func Transcript(msgs []Message, max int) string {
	var lines []string
	for _, m := range msgs {
		switch m.Role {
		case "user":
			if line, ok := turnHead(m.Content); ok {
				if w, ok := playerWords(m.Content); ok {
					line += " \"" + strings.TrimSpace(w) + "\""
				}
				lines = append(lines, line)
			}
		case "assistant":
			if c := strings.TrimSpace(m.Content); c != "" {
				lines = append(lines, "DM: "+c)
			}
			for _, c := range m.ToolCalls {
				var a struct {
					Narration string `json:"narration"`
					Outcome   string `json:"outcome"`
				}
				_ = json.Unmarshal([]byte(c.Function.Arguments), &a)
				switch {
				case a.Narration != "":
					line := "DM: " + a.Narration
					if a.Outcome != "" {
						line += " (" + a.Outcome + ")"
					}
					lines = append(lines, line)
				default:
					lines = append(lines, "["+c.Function.Name+" "+abbrev(c.Function.Arguments, 80)+"]")
				}
			}
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if b.Len()+len(l)+1 > max {
			b.WriteString("…")
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

const summaryPrompt = `You keep the chronicle of a tabletop role-playing game.
You receive the transcript of a block of play. Call save_memory once with:
- title: a short title (at most 8 words);
- summary: 2 to 4 sentences of what happened and what matters later
  (names, places, items, promises, enemies, open threads);
- keywords: 3 to 10 single words or names a player might search for.
Use only what the transcript says.`

var saveMemoryTool = ToolSpec{
	Name:        "save_memory",
	Description: "Save the memory of this block of play.",
	Parameters: object([]string{"title", "summary", "keywords"}, map[string]any{
		"title":    str("A short title."),
		"summary":  str("2 to 4 sentences."),
		"keywords": strList("3 to 10 search words."),
	}),
}

// Summarizer is implemented by a Model that knows whether it can write a
// summary; a Model that does not implement it is asked for one. The
// offline rules narrator cannot: [Summarize] then summarises extractively
// without calling it. [Logged] answers for the model it wraps.
type Summarizer interface {
	CanSummarize() bool
}

// canSummarize reports whether Summarize may ask model for a summary.
func canSummarize(model Model) bool {
	if model == nil {
		return false
	}
	s, ok := model.(Summarizer)
	return !ok || s.CanSummarize()
}

// Summarize makes the memory of an archived block of history: with model
// (the summary model) unless it is nil or cannot summarise (see
// Summarizer: the offline narrator), else — and whenever the model fails —
// extractively from the transcript, so archiving never depends on a model
// being up. The returned Memory has no ID, table or creation time yet.
func Summarize(ctx context.Context, model Model, agentName string, block []Message, log *slog.Logger) store.Memory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := store.Memory{Agent: agentName, Messages: len(block)}
	for _, msg := range block {
		if msg.Turn != 0 && (m.FirstTurn == 0 || msg.Turn < m.FirstTurn) {
			m.FirstTurn = msg.Turn
		}
		m.LastTurn = max(m.LastTurn, msg.Turn)
	}
	transcript := Transcript(block, 12000)
	if canSummarize(model) && transcript != "" {
		if t, s, k, err := summarizeWith(ctx, model, agentName, transcript); err == nil {
			m.Title, m.Summary, m.Keywords, m.Source = t, s, k, model.Name()
			return m
		} else {
			log.Warn("summary model failed, summarising extractively", "model", model.Name(), "err", err)
		}
	}
	m.Title, m.Summary, m.Keywords = extractive(transcript, m.FirstTurn, m.LastTurn)
	m.Source = "extractive"
	return m
}

func summarizeWith(ctx context.Context, model Model, agentName, transcript string) (string, string, []string, error) {
	resp, err := model.Complete(ctx, Request{
		Agent:    "summary",
		System:   summaryPrompt,
		Messages: []Message{{Role: "user", Content: "Transcript (" + agentName + "):\n" + transcript}},
		Tools:    []ToolSpec{saveMemoryTool},
	})
	if err != nil {
		return "", "", nil, err
	}
	for _, c := range resp.Message.ToolCalls {
		if c.Function.Name != saveMemoryTool.Name {
			continue
		}
		var a struct {
			Title    string   `json:"title"`
			Summary  string   `json:"summary"`
			Keywords []string `json:"keywords"`
		}
		if err := json.Unmarshal([]byte(c.Function.Arguments), &a); err != nil {
			return "", "", nil, fmt.Errorf("save_memory arguments: %w", err)
		}
		if strings.TrimSpace(a.Title) == "" || strings.TrimSpace(a.Summary) == "" {
			return "", "", nil, fmt.Errorf("save_memory without title or summary")
		}
		return abbrev(strings.TrimSpace(a.Title), 120), abbrev(strings.TrimSpace(a.Summary), 2000), cleanKeywords(a.Keywords), nil
	}
	return "", "", nil, fmt.Errorf("the summary model did not call save_memory")
}

func cleanKeywords(ks []string) []string {
	out := []string{}
	for _, k := range ks {
		k = strings.TrimSpace(k)
		if k != "" && len(k) <= 40 && !slices.Contains(out, k) && len(out) < 10 {
			out = append(out, k)
		}
	}
	return out
}

// memoryStopwords are words too common to be keywords.
var memoryStopwords = wordSet(`the a an and or but of to in on at by for with from into onto over under
	you your he she it they them his her their its we our i me my this that these those there here is are was
	were be been being has have had do does did not no yes as so if then than too very can could would should
	will shall may might must just now out up down off again more most some any all each every one two
	turn dm acts seat player players round begins look what who how when where why which while also
	only own same other such like well back still even much many`)

func wordSet(words string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}

// extractive builds a title, summary and keywords without a model: the
// title from the first action, the summary from the first sentence of
// each narration, the keywords from the most frequent names and words.
func extractive(transcript string, first, last int) (string, string, []string) {
	untitled := fmt.Sprintf("Turns %d-%d", first, last)
	title := untitled
	var sentences []string
	// The words counted, in the order first seen (which breaks ties), and
	// where each is in that list.
	type seen struct {
		word         string
		count, first int
	}
	var ranked []seen
	index := map[string]int{}
	var lower []byte // the word in hand, lower-cased; a string only once it counts
	for l := range strings.SplitSeq(transcript, "\n") {
		if strings.HasPrefix(l, "DM: ") {
			s := strings.TrimPrefix(l, "DM: ")
			if i := strings.IndexAny(s, ".!?"); i > 0 {
				s = s[:i+1]
			}
			sentences = append(sentences, s)
		} else if !strings.HasPrefix(l, "[") && title == untitled && l != "" {
			title = abbrev(l, 70)
		}
		if strings.HasPrefix(l, "[") {
			continue
		}
		for w := range strings.FieldsFuncSeq(l, notKeywordRune) {
			lower = appendLower(lower[:0], strings.Trim(w, "-'"))
			if utf8.RuneCount(lower) < 4 || memoryStopwords[string(lower)] {
				continue
			}
			i, ok := index[string(lower)]
			if !ok {
				i = len(ranked)
				lw := string(lower)
				index[lw] = i
				ranked = append(ranked, seen{word: lw, first: i})
			}
			ranked[i].count++
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
				ranked[i].count++ // names weigh more
			}
		}
	}
	summary := abbrev(strings.Join(sentences, " "), 600)
	if summary == "" {
		summary = "Nothing was narrated."
	}
	// A total order (first is unique), so any sort gives the same words.
	slices.SortFunc(ranked, func(a, b seen) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return a.first - b.first
	})
	words := make([]string, 0, min(8, len(ranked)))
	for _, r := range ranked[:cap(words)] {
		words = append(words, r.word)
	}
	return title, summary, words
}

// appendLower appends strings.ToLower(s), without making that string
// when s is ASCII.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// notKeywordRune separates the words extractive counts.
func notKeywordRune(r rune) bool { return !unicode.IsLetter(r) && r != '-' && r != '\'' }

// DecodeMessages turns stored history rows into messages (each with its
// turn); rows that do not decode are skipped.
func DecodeMessages(rows []store.AgentMessage) []Message {
	out := make([]Message, 0, len(rows))
	for _, r := range rows {
		var m Message
		if json.Unmarshal(r.Body, &m) == nil {
			m.Turn = r.Turn
			out = append(out, m)
		}
	}
	return out
}
