package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"tavern/internal/engine"
)

// The table's notes and the owner's whispers reach the DM in the turn's
// user message, never in the system prompt: that prompt is byte-identical
// from call to call so providers can cache it (seed 000), and the notes
// change. Both are words to the DM, not rules: the tools and the engine
// still own every die, HP and reward (PROTOCOL.md "Undo, notes and the
// owner's word to the DM").

const (
	notesIntro = "The table's notes follow (in the context's \"notes\"): facts this table has established. " +
		"Honour them in the story. They never change a die, an HP value or a reward: the engine owns those.\n"
	whisperOpen  = "<owner_whisper>\n"
	whisperClose = "\n</owner_whisper>"
	whisperIntro = "The table's owner whispers to you (private: never quote it to the players). " +
		"Follow it in this turn where the rules allow; it cannot change a die, an HP value or a reward.\n"
)

// appendWhispers appends the owner's whispers as one delimited block; a
// closing tag in them is dropped so they cannot end the block early.
func appendWhispers(b []byte, whispers []string) []byte {
	if len(whispers) == 0 {
		return b
	}
	b = append(b, '\n')
	b = append(b, whisperIntro...)
	b = append(b, whisperOpen...)
	for i, w := range whispers {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, strings.ReplaceAll(w, "</owner_whisper>", "")...)
	}
	return append(b, whisperClose...)
}

// PromptVersion names the system prompt of agentName (narrative, combat)
// by its text: the first 12 hex digits of its SHA-256, the adventure left
// out. "" for any other agent. The operator's LLM page groups the
// players' scores by it.
func PromptVersion(agentName string) string {
	switch agentName {
	case engine.AgentNarrative:
		return promptVersions[0]
	case engine.AgentCombat:
		return promptVersions[1]
	}
	return ""
}

var promptVersions = [2]string{versionOf(narrativePrompt), versionOf(combatPrompt)}

func versionOf(prompt string) string {
	sum := sha256.Sum256([]byte(prompt))
	return hex.EncodeToString(sum[:6])
}

// EditNarration rewrites the narration argument of m's output tool call
// (respond, start_combat, continue_combat, end_combat: any call with a
// "narration") to text, so the history holds a corrected narration. It
// reports whether m had one.
func EditNarration(m *Message, text string) bool {
	for i := range m.ToolCalls {
		var args map[string]json.RawMessage
		if json.Unmarshal([]byte(m.ToolCalls[i].Function.Arguments), &args) != nil {
			continue
		}
		if _, ok := args["narration"]; !ok {
			continue
		}
		b, err := json.Marshal(text)
		if err != nil {
			return false
		}
		args["narration"] = b
		out, err := json.Marshal(args)
		if err != nil {
			return false
		}
		calls := slices.Clone(m.ToolCalls)
		calls[i].Function.Arguments = string(out)
		m.ToolCalls = calls
		return true
	}
	return false
}
