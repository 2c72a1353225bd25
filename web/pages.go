package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// lobbyView is what the lobby page shows.
type lobbyView struct {
	Player     *engine.Player
	Tables     []hub.TableSummary
	DM         string
	Adventures []string
	Version    string
}

// tableView is what the table page shows.
type tableView struct {
	Snap    hub.Snapshot
	Player  *engine.Player
	Me      *hub.Character // your character; nil for spectators
	Classes []engine.Class
	Version string
	// Watch is set when a seated player asked to watch as a spectator.
	Watch bool
}

// Role is "player" when you are seated (and not watching), else
// "spectator": the websocket role table.js asks for.
func (v tableView) Role() string {
	if v.Me != nil {
		return "player"
	}
	return "spectator"
}

// Seat is your seat id, or "".
func (v tableView) Seat() string {
	if v.Me != nil {
		return v.Me.Seat
	}
	return ""
}

// CanSit reports whether the "take a seat" form is shown.
func (v tableView) CanSit() bool {
	if v.Me != nil || v.Watch {
		return false
	}
	return v.Snap.Table.Seats == 0 || len(v.Snap.Party) < v.Snap.Table.Seats
}

// render writes c as an HTML page with status st.
func (s *Server) render(w http.ResponseWriter, r *http.Request, st int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render page", "path", r.URL.Path, "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(st)
	_, _ = w.Write(buf.Bytes())
}

// lobbyPage is GET /.
func (s *Server) lobbyPage(w http.ResponseWriter, r *http.Request) {
	p, err := s.player(r, false)
	if err != nil {
		s.log.Error("lobby: resolve player", "err", err)
	}
	v := lobbyView{Player: p, Tables: s.hub.List(), DM: s.hub.DM(), Adventures: s.hub.AdventureIDs(), Version: s.assetVersion}
	s.render(w, r, http.StatusOK, lobbyPage(v))
}

// tablePage is GET /tables/{id}; ?watch=1 shows a seated player the
// spectator view.
func (s *Server) tablePage(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	var snap hub.Snapshot
	if err == nil {
		snap, err = s.hub.Snapshot(r.Context(), id)
	}
	if err != nil {
		st, _, msg := status(err)
		if st >= 500 {
			s.log.Error("table page", "table", id, "err", err)
		}
		s.render(w, r, st, errorPage(st, msg, s.assetVersion))
		return
	}
	p, err := s.player(r, false)
	if err != nil {
		s.log.Error("table page: resolve player", "err", err)
	}
	v := tableView{Snap: snap, Player: p, Classes: s.hub.Classes(), Version: s.assetVersion, Watch: r.URL.Query().Has("watch")}
	if p != nil && !v.Watch {
		for i := range snap.Party {
			if snap.Party[i].PlayerID == p.ID {
				v.Me = &snap.Party[i]
				break
			}
		}
	}
	s.render(w, r, http.StatusOK, tablePage(v))
}

// notFoundPage answers every path no route matches.
func (s *Server) notFoundPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusNotFound, errorPage(http.StatusNotFound, "There is nothing here.", s.assetVersion))
}

// --- view helpers shared by the templates; static/table.js mirrors them ---

// dmLabel describes which game master runs.
func dmLabel(dm string) string {
	if dm == "" || dm == "offline" {
		return "offline rules narrator"
	}
	return dm
}

// hpText is "hp/max".
func hpText(hp, max int) string { return strconv.Itoa(hp) + "/" + strconv.Itoa(max) }

// optInt renders an optional number, or "".
func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// activeEntry returns the initiative entry whose turn it is, or "".
func activeEntry(s hub.Snapshot) string {
	if s.Combat == nil || s.Combat.Index < 0 || s.Combat.Index >= len(s.Combat.Initiative) {
		return ""
	}
	return s.Combat.Initiative[s.Combat.Index].ID
}

// down reports whether a character can no longer act.
func down(c *hub.Character) bool {
	return c.HP <= 0 || slices.Contains(c.Statuses, engine.StatusDead) || slices.Contains(c.Statuses, engine.StatusUnconscious)
}

func whoOf(names map[string]string, id string) string {
	if n := names[id]; n != "" {
		return n
	}
	return "Someone"
}

// questText describes a quest's giver, reward and requirement.
func questText(q hub.QuestView) string {
	t := q.Description
	if q.GiverName != "" {
		t += " From " + q.GiverName + "."
	}
	if q.RewardXP > 0 || q.RewardGold > 0 {
		t += fmt.Sprintf(" Reward: %d XP, %d gold.", q.RewardXP, q.RewardGold)
	}
	return t
}

// canAct reports whether the viewer may send an action now, and a hint
// saying why (not). The hub enforces the same rules; this only keeps the
// action box honest.
func canAct(s hub.Snapshot, me *hub.Character) (bool, string) {
	if me == nil {
		return false, ""
	}
	if down(me) {
		return false, "You are down and cannot act."
	}
	if s.Busy {
		return false, "The DM is resolving a turn…"
	}
	if s.Mode == engine.ModeCombat && s.Table.CombatMode != "narrative" && s.Combat != nil {
		act := activeEntry(s)
		if act == engine.PCEntry(me.Seat) {
			return true, "Your turn! What do you do?"
		}
		for _, e := range s.Combat.Initiative {
			if e.ID == act {
				return false, "Waiting for " + e.Name + "…"
			}
		}
		return false, "Waiting…"
	}
	return true, "What do you do?"
}

// modeText is the #mode badge.
func modeText(s hub.Snapshot) string {
	m := s.Mode
	if m == "" {
		m = engine.ModeNarrative
	}
	return m
}

// logLine is one event as the log shows it: a CSS class, who (optional,
// shown bold) and the text.
type logLine struct {
	Seq   int64
	Kind  string
	Class string
	Who   string
	Text  string
}

// logLines renders events; party names the characters for action events.
func logLines(evs []engine.Event, party []hub.Character) []logLine {
	names := map[string]string{}
	for _, c := range party {
		names[c.ID] = c.Name
	}
	out := make([]logLine, 0, len(evs))
	for _, ev := range evs {
		if l, ok := eventLine(ev, names); ok {
			out = append(out, l)
		}
	}
	return out
}

// eventLine formats one event (static/table.js's eventLine is the same
// function in JavaScript). Event data comes either straight from the
// engine (Go types) or decoded from the store (JSON types); it is
// normalised through JSON first.
func eventLine(ev engine.Event, names map[string]string) (logLine, bool) {
	d := map[string]any{}
	if b, err := json.Marshal(ev.Data); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	l := logLine{Seq: ev.Seq, Kind: ev.Kind, Class: "ev ev-" + ev.Kind}
	switch ev.Kind {
	case "narration":
		l.Text = str(d, "text")
	case "action":
		l.Who = str(d, "name")
		if l.Who == "" {
			l.Who = names[str(d, "character_id")]
		}
		if l.Who == "" {
			l.Who = "Someone"
		}
		l.Text = str(d, "text")
	case "chat":
		l.Who = str(d, "name")
		l.Text = str(d, "text")
	case "dice":
		l.Text = fmt.Sprintf("%s rolls %s = %s", str(d, "roller"), diceNotation(d), num(d, "total"))
		if p := str(d, "purpose"); p != "" {
			l.Text += " (" + p + ")"
		}
	case "damage":
		l.Text = fmt.Sprintf("%s takes %s damage (%s/%s HP)", str(d, "target"), num(d, "amount"), num(d, "hp"), num(d, "max_hp"))
	case "heal":
		l.Text = fmt.Sprintf("%s heals %s (%s/%s HP)", str(d, "target"), num(d, "amount"), num(d, "hp"), num(d, "max_hp"))
	case "status":
		var parts []string
		if a := strs(d, "added"); len(a) > 0 {
			parts = append(parts, "is now "+strings.Join(a, ", "))
		}
		if rm := strs(d, "removed"); len(rm) > 0 {
			parts = append(parts, "is no longer "+strings.Join(rm, ", "))
		}
		if d["skipped_turn"] == true {
			parts = append(parts, "is "+str(d, "reason")+" and loses the turn")
		}
		if len(parts) == 0 {
			return l, false
		}
		l.Text = str(d, "target") + " " + strings.Join(parts, " and ")
	case "combat_started":
		var order []string
		if xs, ok := d["initiative"].([]any); ok {
			for _, x := range xs {
				if e, ok := x.(map[string]any); ok && str(e, "kind") != engine.KindBookend {
					s := str(e, "name")
					if n := num(e, "initiative"); n != "" {
						s += " " + n
					}
					order = append(order, s)
				}
			}
		}
		l.Text = "Combat begins! Initiative: " + strings.Join(order, ", ")
	case "turn":
		e, _ := d["entry"].(map[string]any)
		l.Text = fmt.Sprintf("Round %s: %s's turn", num(d, "round"), str(e, "name"))
	case "combat_ended":
		l.Text = "Combat ends: " + outcomeText(str(d, "outcome"))
		if rw, ok := d["rewards"].(map[string]any); ok {
			var parts []string
			if x := num(rw, "xp"); x != "" && x != "0" {
				parts = append(parts, x+" XP")
			}
			if g := num(rw, "gold"); g != "" && g != "0" {
				parts = append(parts, g+" gold")
			}
			parts = append(parts, strs(rw, "loot")...)
			if len(parts) > 0 {
				l.Text += ". Rewards: " + strings.Join(parts, ", ")
			}
		}
	case "mode":
		if str(d, "mode") == engine.ModeCombat {
			l.Text = "The table enters combat."
		} else {
			l.Text = "The table returns to exploration."
		}
	case "world":
		switch {
		case d["location"] != nil:
			n := str(d, "name")
			if n == "" {
				n = str(d, "location")
			}
			l.Text = "The party is now at " + n + "."
		case d["inventory"] != nil:
			inv, _ := d["inventory"].(map[string]any)
			who := names[str(inv, "character_id")]
			if who == "" {
				who = "Someone"
			}
			switch {
			case str(inv, "added") != "":
				l.Text = who + " takes " + str(inv, "added") + "."
			case str(inv, "removed") != "":
				l.Text = who + " no longer has " + str(inv, "removed") + "."
			default:
				return l, false
			}
		case d["quest"] != nil:
			q, _ := d["quest"].(map[string]any)
			l.Text = "Quest \u201c" + str(q, "name") + "\u201d: " + str(q, "status") + "."
		case d["relationship"] != nil:
			r, _ := d["relationship"].(map[string]any)
			l.Text = str(r, "a") + " and " + str(r, "b") + ": relationship " + num(r, "value") + "."
		case d["gold"] != nil:
			g, _ := d["gold"].(map[string]any)
			l.Text = whoOf(names, str(g, "character_id")) + " now has " + num(g, "gold") + " gold."
		case d["xp"] != nil:
			x, _ := d["xp"].(map[string]any)
			l.Text = whoOf(names, str(x, "character_id")) + " gains " + num(x, "gain") + " XP."
		case d["behavior"] != nil:
			l.Text = str(d, "npc") + " is now " + str(d, "behavior") + "."
		case d["created"] != nil:
			l.Text = str(d, "npc") + " appears."
		case d["npc_location"] != nil:
			l.Text = str(d, "npc") + " moves to " + str(d, "npc_location") + "."
		case d["new_location"] != nil:
			l.Text = "A new place: " + str(d, "name") + "."
		default:
			return l, false
		}
	case "system":
		l.Text = str(d, "message")
	case "combatant_joined":
		l.Text = fmt.Sprintf("%s joins the fight (initiative %s).", str(d, "name"), num(d, "initiative"))
	case "player_joined":
		l.Text = str(d, "name") + " joins the table"
		if str(d, "role") == "spectator" {
			l.Text += " as a spectator"
		}
		l.Text += "."
	case "player_left":
		l.Text = str(d, "name") + " leaves the table."
	default:
		return l, false
	}
	return l, true
}

// outcomeText names a combat outcome.
func outcomeText(o string) string {
	switch o {
	case engine.OutcomePlayerWin:
		return "victory"
	case engine.OutcomePlayerFlee:
		return "the party fled"
	case engine.OutcomePlayerDie:
		return "the party has fallen"
	case engine.OutcomeNPCFlee:
		return "the foes fled"
	case "forced_end":
		return "the fight was called off"
	case "error_abort":
		return "aborted"
	}
	return o
}

// diceNotation is the roll's notation, with the modifier if the notation
// lacks it.
func diceNotation(d map[string]any) string {
	n := str(d, "notation")
	m := num(d, "modifier")
	if m != "" && m != "0" && !strings.ContainsAny(n, "+-") {
		if !strings.HasPrefix(m, "-") {
			m = "+" + m
		}
		n += m
	}
	return n
}

func str(d map[string]any, k string) string {
	if d == nil {
		return ""
	}
	switch v := d[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func num(d map[string]any, k string) string {
	if d == nil {
		return ""
	}
	if v, ok := d[k].(float64); ok {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return str(d, k)
}

func strs(d map[string]any, k string) []string {
	var out []string
	switch v := d[k].(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case string:
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// statusText joins statuses for display.
func statusText(ss []string) string { return strings.Join(ss, ", ") }
