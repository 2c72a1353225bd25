package web

import (
	"fmt"
	"net/http"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// story is GET /api/tables/{id}/story?format=md|text: the table's whole
// story as a file to keep, read from the same events as GET /events (and
// as public): the DM's narration, the players' actions and the fights'
// beginnings and ends. Dice, hit points and chat stay out.
func (s *Server) story(w http.ResponseWriter, r *http.Request) {
	id, ok := s.visibleTable(w, r)
	if !ok {
		return
	}
	md := true
	switch r.URL.Query().Get("format") {
	case "", "md", "markdown":
	case "text", "txt":
		md = false
	default:
		s.error(w, r, badRequest(`format must be "md" or "text".`))
		return
	}
	snap, err := s.hub.Snapshot(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	names := map[string]string{}
	for _, c := range snap.Party {
		names[c.ID] = c.Name
	}
	var b strings.Builder
	if md {
		fmt.Fprintf(&b, "# %s\n\n", snap.Table.Name)
	} else {
		fmt.Fprintf(&b, "%s\n%s\n\n", snap.Table.Name, strings.Repeat("=", len([]rune(snap.Table.Name))))
	}
	// All of them first: a retcon or an edit comes after the events it
	// changes (story_retcon.go).
	var all []engine.Event
	for since := int64(0); ; {
		evs, err := s.hub.Events(r.Context(), id, since, hub.MaxEventsPage)
		if err != nil {
			s.error(w, r, err)
			return
		}
		all = append(all, evs...)
		if len(evs) < hub.MaxEventsPage {
			break
		}
		since = evs[len(evs)-1].Seq
	}
	for _, ev := range revised(all, r.URL.Query().Get("retracted") == "1") {
		if line := storyLine(ev, names, md); line != "" {
			b.WriteString(line + "\n\n")
		}
	}
	ext, ctype := "md", "text/markdown; charset=utf-8"
	if !md {
		ext, ctype = "txt", "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="tavern-%s.%s"`, id, ext))
	_, _ = w.Write([]byte(b.String()))
}

// storyLine is one paragraph of the story, or "" for an event it leaves
// out.
func storyLine(ev engine.Event, names map[string]string, md bool) string {
	switch d := ev.Data.(type) {
	case engine.NarrationData:
		return d.Text
	case engine.ActionData:
		who := d.Name
		if who == "" {
			who = names[d.CharacterID]
		}
		if who == "" {
			who = "Someone"
		}
		if md {
			return fmt.Sprintf("> **%s:** %s", who, d.Text)
		}
		return fmt.Sprintf("%s: %s", who, d.Text)
	case engine.CombatStartedData:
		if md {
			return "---\n\n*A fight begins.*"
		}
		return "* A fight begins. *"
	case engine.CombatEndedData:
		t := map[engine.Outcome]string{
			engine.OutcomePlayerWin: "The party wins the fight.", engine.OutcomePlayerFlee: "The party flees the fight.",
			engine.OutcomePlayerDie: "The party has fallen.", engine.OutcomeNPCFlee: "The foes flee.",
		}[d.Outcome]
		if t == "" {
			t = "The fight is over."
		}
		if md {
			return "*" + t + "*\n\n---"
		}
		return "* " + t + " *"
	}
	return ""
}
