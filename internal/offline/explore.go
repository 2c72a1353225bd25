package offline

// Exploration: moving the party, looking around, arriving somewhere (and
// how the NPCs there greet the character), and exploring a place that is
// not on the map yet.

import (
	"encoding/json"
	"fmt"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

func (t *offlineTurn) narrativeFollowUp(l step) reply {
	if l.Err {
		msg := strings.TrimPrefix(l.Result, "Error: ")
		return t.respond(t.pick("err", "That does not work out. ", "Not so fast. ")+msg, t.hints())
	}
	// Only the results read below are decoded: a look's is the whole place.
	switch l.Name {
	case "get_npcs_at_location", "update_npc_behavior":
		if moved, ok := t.stepNamed("move_party"); ok {
			if c, ok := t.reactions(moved); ok {
				return c
			}
			return t.narrativeFollowUp(moved)
		}
	case "move_party":
		if c, ok := t.reactions(l); ok {
			return c
		}
		return t.respond(t.arrival(l), t.hints())
	case "look":
		return t.respond(t.describeHere(), t.hints())
	case "pickup_item":
		res := decodeStep[map[string]any](l)
		return t.respond(fmt.Sprintf("%s %s %s.", res["by"], t.pick("take", "picks up", "stows away", "takes"), strings.ToLower(fmt.Sprint(res["picked_up"]))), t.hints())
	case "get_player_info":
		return t.respond(sheet(decodeStep[map[string]any](l)), t.hints())
	case "get_npc_info":
		return t.respond(t.dialogue(decodeStep[map[string]any](l)), t.hints())
	}
	return t.respond(t.ambient(), t.hints())
}

// arrival narrates the party reaching the place move_party's result
// names, and what waits there.
func (t *offlineTurn) arrival(moved step) string {
	loc, _ := t.movedTo(moved)
	if loc == nil {
		loc = &agent.LocationView{}
	}
	t.Ctx.Location = loc
	s := t.pick("arrive", "You make your way to ", "The party sets off and soon reaches ", "A short walk brings you to ") +
		loc.Name + ". " + loc.Description
	if hostile := t.hostiles(); len(hostile) > 0 {
		s += " " + t.pick("danger", "Shapes stir ahead: ", "You are not alone: ", "Eyes glint in the gloom: ") + strings.Join(hostile, ", ") + "."
	} else if p := t.peopleSentence(); p != "" {
		s += " " + p
	}
	return s
}

// movedTo returns the location a move_party result describes (nil if it
// names none; filled as far as it decodes) and the decoding's error. The
// arrival and the hints both read it: it is decoded once per call.
func (t *offlineTurn) movedTo(moved step) (*agent.LocationView, error) {
	if t.moved == nil || t.moved.result != moved.Result {
		var r struct {
			Location *agent.LocationView `json:"location"`
		}
		err := json.Unmarshal([]byte(moved.Result), &r)
		t.moved = &movedLocation{result: moved.Result, loc: r.Location, err: err}
	}
	return t.moved.loc, t.moved.err
}

// movedLocation is a move_party result decoded (see movedTo).
type movedLocation struct {
	result string
	loc    *agent.LocationView
	err    error
}

// sheet reads get_player_info's result out: the character in one line.
func sheet(res map[string]any) string {
	var inv []string
	if items, ok := res["inventory"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				inv = append(inv, fmt.Sprint(m["name"]))
			}
		}
	}
	return fmt.Sprintf("%s, level %v %s: %v/%v HP, %v gold, %s and %s. Carrying: %s.",
		res["name"], res["level"], res["class"], res["hp"], res["max_hp"], res["gold"], res["weapon"], res["armour"], fmtList(inv))
}

func (t *offlineTurn) respond(narration string, hints []string) reply {
	if trap := t.trapTold(); trap != "" {
		narration = trap + " " + narration
	}
	if lc := t.Ctx.LastCombat; lc != nil {
		narration = combatAftermath(lc) + " " + narration
	}
	args := map[string]any{"narration": strings.TrimSpace(narration)}
	if len(hints) > 0 {
		args["hints"] = hints
	}
	return call("respond", args)
}

func combatAftermath(r *engine.CombatResult) string {
	var b strings.Builder
	switch r.Outcome {
	case engine.OutcomePlayerWin:
		b.WriteString("The fight is won.")
	case engine.OutcomeNPCFlee:
		b.WriteString("Your foes have scattered.")
	case engine.OutcomePlayerFlee:
		b.WriteString("You got away, hearts pounding.")
	case engine.OutcomePlayerDie:
		b.WriteString("You wake, battered, back where the journey began.")
	default:
		b.WriteString("The fight is behind you.")
	}
	if r.XP > 0 || r.Gold > 0 {
		fmt.Fprintf(&b, " The party shares %d XP and %d gold.", r.XP, r.Gold)
	}
	if len(r.Loot) > 0 {
		fmt.Fprintf(&b, " Left on the ground: %s.", strings.Join(r.Loot, ", "))
	}
	for _, l := range r.LevelUps {
		fmt.Fprintf(&b, " %s!", l)
	}
	return b.String()
}

func (t *offlineTurn) actorName() string {
	if t.Ctx.Actor != nil {
		return t.Ctx.Actor.Name
	}
	return "The party"
}

func (t *offlineTurn) hostiles() []string {
	var out []string
	if t.Ctx.Location == nil {
		return nil
	}
	for _, n := range t.Ctx.Location.NPCs {
		if n.Hostile && !engine.HasStatus(n.Statuses, engine.StatusDead) {
			out = append(out, n.Name)
		}
	}
	return out
}

func (t *offlineTurn) exitList() string {
	var out []string
	if t.Ctx.Location != nil {
		for _, e := range t.Ctx.Location.Exits {
			out = append(out, e.Name)
		}
	}
	return fmtList(out)
}

func (t *offlineTurn) peopleSentence() string {
	var out []string
	if t.Ctx.Location != nil {
		for _, n := range t.Ctx.Location.NPCs {
			if engine.HasStatus(n.Statuses, engine.StatusDead) {
				out = append(out, "the body of "+n.Name)
			} else {
				out = append(out, fmt.Sprintf("%s the %s", n.Name, n.Kind))
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "Here: " + strings.Join(out, ", ") + "."
}

func (t *offlineTurn) itemsSentence() string {
	var out []string
	if t.Ctx.Location != nil {
		for _, it := range t.Ctx.Location.Items {
			out = append(out, strings.ToLower(it.Name))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "On the ground: " + strings.Join(out, ", ") + "."
}

func (t *offlineTurn) ambient() string {
	if t.Ctx.Location == nil {
		return ""
	}
	return t.pick("amb", "Around you, "+t.Ctx.Location.Name+" waits.", "The wind moves through "+t.Ctx.Location.Name+".", "Somewhere nearby, a door creaks.")
}

func (t *offlineTurn) describeHere() string {
	l := t.Ctx.Location
	if l == nil {
		return "Darkness."
	}
	parts := []string{l.Name + ". " + l.Description}
	if p := t.peopleSentence(); p != "" {
		parts = append(parts, p)
	}
	if s := t.itemsSentence(); s != "" {
		parts = append(parts, s)
	}
	parts = append(parts, "Ways on: "+t.exitList()+".")
	return strings.Join(parts, " ")
}

// They describe where the party is after the action: after a move, the
// place it reached; after a pickup, without the item taken.
func (t *offlineTurn) hints() []string {
	var h []string
	l := t.Ctx.Location
	if moved, ok := t.stepNamed("move_party"); ok && !moved.Err {
		if loc, err := t.movedTo(moved); err == nil && loc != nil && loc.ID != "" {
			l = loc
		}
	}
	if l == nil {
		return nil
	}
	taken := map[string]bool{}
	for _, st := range t.Steps {
		if st.Name == "pickup_item" && !st.Err {
			var r map[string]any
			_ = json.Unmarshal([]byte(st.Result), &r)
			taken[strings.ToLower(fmt.Sprint(r["picked_up"]))] = true
		}
	}
	for _, n := range l.NPCs {
		if engine.HasStatus(n.Statuses, engine.StatusDead) {
			continue
		}
		if n.Hostile {
			h = append(h, "attack "+n.Name)
		} else {
			h = append(h, "talk to "+n.Name)
		}
	}
	for _, it := range l.Items {
		if name := strings.ToLower(it.Name); !taken[name] {
			h = append(h, "take the "+withoutArticle(name))
		}
	}
	for _, e := range l.Exits {
		if e.Dest != "" && e.Dest != l.Name {
			h = append(h, "go to "+e.Dest)
		}
	}
	if len(h) > 4 {
		h = h[:4]
	}
	return h
}

// explore: a place that is not on the map yet is created next to here; the
// party goes in, finds something lurking and something lying about.
func (t *offlineTurn) explore(what string) reply {
	name := titleCase(strings.TrimRight(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(what, "i "), "we ")), ".!? "))
	name = strings.TrimSuffix(strings.TrimSuffix(name, " I Discovered"), " We Found")
	if len(name) > 40 {
		name = name[:40]
	}
	if _, ok := t.stepNamed("list_all_locations"); !ok {
		return call("list_all_locations", map[string]any{})
	}
	made, ok := t.stepNamed("create_location")
	if !ok {
		return call("create_location", map[string]any{"name": name,
			"description": fmt.Sprintf("%s: cold air, dripping stone and a darkness that swallows torchlight.", name)})
	}
	if made.Err {
		return t.respond(strings.TrimPrefix(made.Result, "Error: "), t.hints())
	}
	loc := decodeStep[struct{ ID string }](made).ID
	if _, ok := t.stepNamed("move_party"); !ok {
		return call("move_party", map[string]any{"to": loc})
	}
	dark := strings.Contains(strings.ToLower(name), "cave") || strings.Contains(strings.ToLower(name), "dark") || strings.Contains(strings.ToLower(name), "ruin")
	if _, ok := t.stepNamed("create_npc"); !ok && dark {
		return call("create_npc", map[string]any{"name": "Cave spider", "kind": "monster", "location": loc, "personality": "patient, hungry",
			"hostile": true, "behavior": "aggressive", "level": 1, "weapon": "fangs"})
	}
	if _, ok := t.stepNamed("spawn_item_at_location"); !ok {
		return call("spawn_item_at_location", map[string]any{"template": "rope", "name": "Frayed rope", "location": loc, "flaws": []string{"frayed"}})
	}
	s := fmt.Sprintf("You step into %s. The air is cold and still.", name)
	if dark {
		s += " Something many-legged shifts in the dark above you: a cave spider."
	}
	s += " A frayed rope lies coiled by the entrance."
	return t.respond(s, []string{"attack the cave spider", "take the frayed rope", "go back"})
}

// reactions describe how the NPCs here greet the character after a move,
// by their relationship (seed 001 scenario 8); the cold ones turn cold.
func (t *offlineTurn) reactions(moved step) (reply, bool) {
	npcs, ok := t.stepNamed("get_npcs_at_location")
	if !ok {
		return call("get_npcs_at_location", map[string]any{}), true
	}
	list := decodeStep[[]struct {
		ID           string `json:"id"`
		Name         string `json:"name"`
		Behavior     string `json:"behavior"`
		Hostile      bool   `json:"hostile"`
		Alive        bool   `json:"alive"`
		Relationship int    `json:"relationship"`
	}](npcs)
	for _, n := range list {
		if n.Alive && !n.Hostile && n.Relationship <= -30 && n.Behavior != "cold" {
			if _, done := t.stepWith("update_npc_behavior", "npc", n.ID); !done {
				return call("update_npc_behavior", map[string]any{"npc": n.ID, "behavior": "cold"}), true
			}
		}
	}
	var greet []string
	for _, n := range list {
		switch {
		case !n.Alive:
		case n.Hostile:
		case n.Relationship >= 30:
			greet = append(greet, fmt.Sprintf("%s lights up and waves you over.", n.Name))
		case n.Relationship <= -30:
			greet = append(greet, fmt.Sprintf("%s turns away, cold as the river.", n.Name))
		default:
			greet = append(greet, fmt.Sprintf("%s gives you a nod.", n.Name))
		}
	}
	if len(greet) == 0 {
		return reply{}, false
	}
	var r struct {
		Location agent.LocationView `json:"location"`
	}
	_ = json.Unmarshal([]byte(moved.Result), &r)
	return t.respond(fmt.Sprintf("You come into %s. %s %s", r.Location.Name, r.Location.Description, strings.Join(greet, " ")), t.hints()), true
}

// withoutArticle drops a leading "the", "a" or "an" from a name, so that
// "take the " + name never reads "take the the lantern".
func withoutArticle(name string) string {
	for _, a := range []string{"the ", "a ", "an "} {
		if rest, ok := strings.CutPrefix(name, a); ok {
			return rest
		}
	}
	return name
}
