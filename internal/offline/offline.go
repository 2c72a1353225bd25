package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// Narrator is the deterministic rules narrator, the default agent.Model
// when no API key is set and the model of most tests. It reads the turn
// (the <context> block and the player's words) and the tool results of the
// turn so far, and answers with the tool calls and output tool an LLM
// would: it parses intent (attack, move, look, talk, take, inventory,
// defend, flee), plays NPC turns by their tactics, and varies its
// narration with a hash of the turn, so the same turn always reads the
// same. Safe for concurrent use: it keeps no state between calls.
type Narrator struct{}

// Name implements agent.Model.
func (Narrator) Name() string { return "offline" }

// CanSummarize implements agent.Summarizer: the narrator plays by rules
// and writes no summaries, so archived history is summarised
// extractively.
func (Narrator) CanSummarize() bool { return false }

// step is one tool call of the current turn and its result.
type step struct {
	Name   string
	Args   map[string]any
	Result string
	Err    bool
}

// offlineTurn is what the narrator knows of the turn.
type offlineTurn struct {
	Ctx   agent.TurnContext
	Words string
	Steps []step
	key   string
}

// Complete implements agent.Model.
func (Narrator) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	t, err := parseTurn(req.Messages)
	if err != nil {
		return agent.Response{}, err
	}
	var call agent.ToolCall
	if req.Agent == engine.AgentCombat {
		call = t.combat()
	} else {
		call = t.narrative()
	}
	call.ID = fmt.Sprintf("call_%d_%d", t.Ctx.Turn, len(t.Steps)+1)
	call.Type = "function"
	if req.OnDelta != nil {
		var a struct {
			Narration string `json:"narration"`
		}
		if json.Unmarshal([]byte(call.Function.Arguments), &a) == nil && a.Narration != "" {
			for _, chunk := range chunks(a.Narration) {
				req.OnDelta(chunk)
			}
		}
	}
	prompt := len(req.System)
	for _, m := range req.Messages {
		prompt += len(m.Content)
	}
	return agent.Response{
		Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{call}},
		Usage:   agent.Usage{PromptTokens: prompt / 4, CompletionTokens: len(call.Function.Arguments) / 4},
	}, nil
}

// chunks splits narration into word groups, the way a model streams.
func chunks(s string) []string {
	words := strings.SplitAfter(s, " ")
	var out []string
	for i := 0; i < len(words); i += 4 {
		out = append(out, strings.Join(words[i:min(i+4, len(words))], ""))
	}
	return out
}

func parseTurn(msgs []agent.Message) (*offlineTurn, error) {
	u := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" && agent.IsTurnMessage(msgs[i].Content) {
			u = i
			break
		}
	}
	if u < 0 {
		return nil, fmt.Errorf("offline narrator: no turn message")
	}
	t := &offlineTurn{}
	var err error
	if t.Ctx, t.Words, err = agent.ReadTurnMessage(msgs[u].Content); err != nil {
		return nil, fmt.Errorf("offline narrator: %w", err)
	}
	results := map[string]agent.Message{}
	for _, m := range msgs[u+1:] {
		if m.Role == "tool" {
			results[m.ToolCallID] = m
		}
	}
	for _, m := range msgs[u+1:] {
		for _, c := range m.ToolCalls {
			s := step{Name: c.Function.Name}
			_ = json.Unmarshal([]byte(c.Function.Arguments), &s.Args)
			if r, ok := results[c.ID]; ok {
				s.Result = r.Content
				s.Err = strings.HasPrefix(r.Content, "Error:") || strings.HasPrefix(r.Content, "Unknown tool")
			}
			t.Steps = append(t.Steps, s)
		}
	}
	t.key = fmt.Sprintf("%d|%s|%s", t.Ctx.Turn, t.Ctx.Kind, t.Words)
	return t, nil
}

func (t *offlineTurn) last() *step {
	if len(t.Steps) == 0 {
		return nil
	}
	return &t.Steps[len(t.Steps)-1]
}

// pick chooses one of options by a hash of the turn and a salt.
func (t *offlineTurn) pick(salt string, options ...string) string {
	h := fnv.New32a()
	h.Write([]byte(t.key + "|" + salt))
	return options[int(h.Sum32()%uint32(len(options)))]
}

func call(name string, args map[string]any) agent.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err) // args are maps of strings, numbers and lists
	}
	return agent.ToolCall{Function: agent.FunctionCall{Name: name, Arguments: string(b)}}
}

// fmtList joins items for a sentence, or says there are none.
func fmtList(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// ---- intent parsing ----

var (
	reAttack = regexp.MustCompile(`\b(attack|attacks|fight|kill|strike|hit|charge|ambush|stab|slash|shoot|punch|swing|smite|cut|draw my|draw our)\b`)
	reFlee   = regexp.MustCompile(`\b(flee|run away|escape|retreat|withdraw)\b`)
	reDefend = regexp.MustCompile(`\b(defend|block|parry|guard|shield|brace|dodge)\b`)
	reMove   = regexp.MustCompile(`\b(go|goes|walk|head|enter|travel|leave|return|follow|climb|cross|move|visit|proceed|back to)\b`)
	reTake   = regexp.MustCompile(`\b(take|pick up|picks up|grab|pocket|collect|loot)\b`)
	reTalk   = regexp.MustCompile(`\b(talk|speak|ask|greet|chat|say|tell|hail|question|bargain|haggle|buy)\b`)
	reLook   = regexp.MustCompile(`\b(look|search|examine|inspect|explore|observe|where|survey|around)\b`)
	reInv    = regexp.MustCompile(`\b(inventory|my gear|my items|my pack|backpack|check myself|my wounds|status)\b`)
	reQuest  = regexp.MustCompile(`\b(quest|job|work|help|lantern|goblin|goblins|task|reward|trouble|rumou?r|news)\b`)
	reTrade  = regexp.MustCompile(`\b(buy|sell|trade|wares|price|potion|shop)\b`)
	reToken  = regexp.MustCompile(`[a-z0-9]+`)
)

var stopwords = map[string]bool{"the": true, "and": true, "to": true, "a": true, "an": true, "of": true, "at": true,
	"with": true, "my": true, "his": true, "her": true, "into": true, "in": true, "on": true, "i": true, "we": true,
	"our": true, "back": true, "path": true, "way": true, "for": true, "from": true}

func tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range reToken.FindAllString(strings.ToLower(s), -1) {
		if !stopwords[w] && len(w) > 1 {
			out[w] = true
		}
	}
	return out
}

// score counts the words of the player's text found in any of names.
func score(words map[string]bool, names ...string) int {
	n := 0
	for _, name := range names {
		for w := range tokens(name) {
			if words[w] {
				n++
			}
		}
	}
	return n
}

// ---- narrative ----

func (t *offlineTurn) narrative() agent.ToolCall {
	text := strings.ToLower(t.Words)
	loc := t.Ctx.Location
	if loc == nil {
		loc = &agent.LocationView{}
	}
	if c, ok := t.worldIntent(); ok {
		return c
	}
	words := tokens(text)
	if reAttack.MatchString(text) {
		// Scenario 1: attacking sours the relationship, then the fight.
		if n := t.matchNPC(words, true); n != nil {
			if _, ok := t.stepNamed("update_relationship"); !ok {
				return call("update_relationship", map[string]any{"b": n.ID, "delta": -20})
			}
			return call("start_combat", map[string]any{"narration": t.combatOpening(n), "foes": []string{n.ID}})
		}
	}
	if l := t.last(); l != nil {
		return t.narrativeFollowUp(*l)
	}
	switch {
	case reAttack.MatchString(text):
		return t.respond(t.pick("nofoe", "There is nobody here to fight. ", "Your hand drops to your weapon, but no foe is in sight. ")+t.ambient(), t.hints())
	case reMove.MatchString(text):
		if e := t.matchExit(words); e != nil {
			return call("move_party", map[string]any{"to": e.To})
		}
		return t.respond(fmt.Sprintf("You look for that way but cannot find it. From %s you can take: %s.", loc.Name, t.exitList()), t.hints())
	case reTake.MatchString(text):
		if it := t.matchItem(words); it != nil {
			return call("pickup_item", map[string]any{"item": it.ID})
		}
		return t.respond("There is nothing like that lying here. "+t.itemsSentence(), t.hints())
	case reInv.MatchString(text):
		return call("get_player_info", map[string]any{})
	case reTalk.MatchString(text) || strings.Contains(t.Words, `"`):
		if n := t.matchNPC(words, false); n != nil {
			return call("get_npc_info", map[string]any{"npc": n.ID})
		}
		return t.respond("Your words fall into silence: nobody here answers. "+t.peopleSentence(), t.hints())
	case reLook.MatchString(text):
		return call("look", map[string]any{})
	}
	if n := t.matchNPC(words, false); n != nil && score(words, n.Name) > 0 {
		return call("get_npc_info", map[string]any{"npc": n.ID})
	}
	return t.respond(t.actorName()+" "+t.pick("generic",
		"takes a moment. Nothing in the world answers, yet.",
		"tries it; the moment passes without consequence.",
		"does so, and the day moves on around them.")+" "+t.ambient(), t.hints())
}

func (t *offlineTurn) narrativeFollowUp(l step) agent.ToolCall {
	if l.Err {
		msg := strings.TrimPrefix(l.Result, "Error: ")
		return t.respond(t.pick("err", "That does not work out. ", "Not so fast. ")+msg, t.hints())
	}
	var res map[string]any
	_ = json.Unmarshal([]byte(l.Result), &res)
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
		var r struct {
			Location agent.LocationView `json:"location"`
		}
		_ = json.Unmarshal([]byte(l.Result), &r)
		t.Ctx.Location = &r.Location
		s := t.pick("arrive", "You make your way to ", "The party sets off and soon reaches ", "A short walk brings you to ") +
			r.Location.Name + ". " + r.Location.Description
		if hostile := t.hostiles(); len(hostile) > 0 {
			s += " " + t.pick("danger", "Shapes stir ahead: ", "You are not alone: ", "Eyes glint in the gloom: ") + strings.Join(hostile, ", ") + "."
		} else if p := t.peopleSentence(); p != "" {
			s += " " + p
		}
		return t.respond(s, t.hints())
	case "look":
		return t.respond(t.describeHere(), t.hints())
	case "pickup_item":
		return t.respond(fmt.Sprintf("%s %s %s.", res["by"], t.pick("take", "picks up", "stows away", "takes"), strings.ToLower(fmt.Sprint(res["picked_up"]))), t.hints())
	case "get_player_info":
		var inv []string
		if items, ok := res["inventory"].([]any); ok {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					inv = append(inv, fmt.Sprint(m["name"]))
				}
			}
		}
		return t.respond(fmt.Sprintf("%s, level %v %s: %v/%v HP, %v gold, %s and %s. Carrying: %s.",
			res["name"], res["level"], res["class"], res["hp"], res["max_hp"], res["gold"], res["weapon"], res["armour"], fmtList(inv)), t.hints())
	case "get_npc_info":
		return t.respond(t.dialogue(res), t.hints())
	}
	return t.respond(t.ambient(), t.hints())
}

func (t *offlineTurn) respond(narration string, hints []string) agent.ToolCall {
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

func (t *offlineTurn) matchNPC(words map[string]bool, preferHostile bool) *agent.NPCBrief {
	loc := t.Ctx.Location
	if loc == nil {
		return nil
	}
	var best *agent.NPCBrief
	bestScore := 0
	for i := range loc.NPCs {
		n := &loc.NPCs[i]
		if engine.HasStatus(n.Statuses, engine.StatusDead) {
			continue
		}
		s := score(words, n.Name, n.Kind, n.ID) * 2
		if preferHostile && n.Hostile {
			s++
		}
		if s > bestScore {
			best, bestScore = n, s
		}
	}
	if best == nil && len(loc.NPCs) == 1 && !engine.HasStatus(loc.NPCs[0].Statuses, engine.StatusDead) {
		best = &loc.NPCs[0]
	}
	return best
}

func (t *offlineTurn) matchExit(words map[string]bool) *agent.ExitView {
	loc := t.Ctx.Location
	if loc == nil {
		return nil
	}
	var best *agent.ExitView
	bestScore := 0
	for i := range loc.Exits {
		e := &loc.Exits[i]
		if s := score(words, e.Name, e.Dest, e.To); s > bestScore {
			best, bestScore = e, s
		}
	}
	return best
}

func (t *offlineTurn) matchItem(words map[string]bool) *agent.ItemRef {
	loc := t.Ctx.Location
	if loc == nil {
		return nil
	}
	var best *agent.ItemRef
	bestScore := 0
	for i := range loc.Items {
		it := &loc.Items[i]
		if s := score(words, it.Name, it.ID); s > bestScore {
			best, bestScore = it, s
		}
	}
	if best == nil && len(loc.Items) == 1 && (words["it"] || words["everything"] || words["all"]) {
		best = &loc.Items[0]
	}
	return best
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

func (t *offlineTurn) hints() []string {
	var h []string
	l := t.Ctx.Location
	if l == nil {
		return nil
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
		h = append(h, "take the "+strings.ToLower(it.Name))
	}
	for _, e := range l.Exits {
		if e.Dest != "" {
			h = append(h, "go to "+e.Dest)
		}
	}
	if len(h) > 4 {
		h = h[:4]
	}
	return h
}

func (t *offlineTurn) combatOpening(n *agent.NPCBrief) string {
	who := t.actorName()
	if n.Hostile {
		return fmt.Sprintf("%s %s %s. %s", who, t.pick("open", "draws steel and rushes", "lunges at", "charges"), n.Name,
			t.pick("cry", "The goblins shriek and scramble for their weapons!", "Steel rings; there is no turning back now.", "The air fills with war cries."))
	}
	return fmt.Sprintf("%s turns on %s without warning. %s", who, n.Name, t.pick("cry", "Shock gives way to fury.", "Whatever trust there was is gone."))
}

// dialogue voices an NPC from get_npc_info's result.
func (t *offlineTurn) dialogue(n map[string]any) string {
	name := fmt.Sprint(n["name"])
	lines := map[string]string{}
	if m, ok := n["lines"].(map[string]any); ok {
		for k, v := range m {
			lines[k] = fmt.Sprint(v)
		}
	}
	personality := fmt.Sprint(n["personality"])
	manner := mannerOf(personality, t)
	if hostile, _ := n["hostile"].(bool); hostile {
		return fmt.Sprintf("%s bares its teeth %s. Words will not settle this.", name, manner)
	}
	if here, _ := n["here"].(bool); !here {
		return fmt.Sprintf("%s is not here to hear you.", name)
	}
	text := strings.ToLower(t.Words)
	var said []string
	if g := lines["greet"]; g != "" {
		said = append(said, g)
	}
	switch {
	case reTrade.MatchString(text) && lines["trade"] != "":
		said = append(said, lines["trade"])
	case reQuest.MatchString(text):
		if r := lines["rumour"]; r != "" {
			said = append(said, r)
		}
		if q := lines["quest"]; q != "" {
			said = append(said, q)
		}
	default:
		if r := lines["rumour"]; r != "" && t.pick("rum", "y", "n") == "y" {
			said = append(said, r)
		}
	}
	if len(said) == 0 {
		said = append(said, "Hm. What do you want?")
	}
	return fmt.Sprintf("%s %s: \"%s\"", name, manner, strings.Join(said, " "))
}

func mannerOf(personality string, t *offlineTurn) string {
	p := strings.ToLower(personality)
	switch {
	case strings.Contains(p, "warm"):
		return t.pick("m", "smiles tiredly and says", "wipes her hands and answers")
	case strings.Contains(p, "cheerful") || strings.Contains(p, "talkative"):
		return t.pick("m", "beams and rattles off", "spreads his arms wide")
	case strings.Contains(p, "riddle") || strings.Contains(p, "sharp"):
		return t.pick("m", "squints at you and mutters", "cackles softly")
	case strings.Contains(p, "cruel") || strings.Contains(p, "spiteful"):
		return t.pick("m", "hisses", "spits")
	}
	return "says"
}

// ---- combat ----

func (t *offlineTurn) combat() agent.ToolCall {
	cb := t.Ctx.Combat
	if cb == nil {
		return call("end_combat", map[string]any{"narration": "The dust settles.", "outcome": engine.OutcomeForcedEnd})
	}
	switch t.Ctx.Kind {
	case agent.TurnResolution:
		return call("end_combat", map[string]any{"narration": t.ending(cb.Ending), "outcome": cb.Ending})
	case agent.TurnBookend:
		return call("continue_combat", map[string]any{"narration": t.bookend()})
	}
	if len(t.Steps) == 0 {
		if t.Ctx.Kind == agent.TurnNPC {
			return t.npcAction()
		}
		return t.pcAction()
	}
	if first := t.Steps[0]; first.Err && len(t.Steps) == 1 {
		// The chosen action was refused: fall back on the simplest valid
		// one, attacking the first foe standing.
		if f := t.foes(); len(f) > 0 {
			return call("attack", map[string]any{"target": f[0].Entry})
		}
	}
	if t.Ctx.Kind == agent.TurnPlayer && t.Ctx.CombatMode == engine.CombatNarrative {
		// Narrative combat has no queue: the foes answer in the same beat.
		if c, ok := t.foeReaction(); ok {
			return c
		}
	}
	var parts []string
	for _, s := range t.Steps {
		if !s.Err {
			parts = append(parts, t.combatNarration(s))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, t.combatNarration(t.Steps[len(t.Steps)-1]))
	}
	return call("continue_combat", map[string]any{"narration": strings.Join(parts, " ")})
}

var (
	reUse  = regexp.MustCompile(`\b(drink|drinks|quaff|potion|bandage|use|uses)\b`)
	reHeal = regexp.MustCompile(`\b(heal|heals|pray|prays|tend|tends|mend)\b`)
)

func (t *offlineTurn) me() *agent.PartyMember {
	if t.Ctx.Actor == nil {
		return nil
	}
	for i := range t.Ctx.Party {
		if t.Ctx.Party[i].ID == t.Ctx.Actor.ID {
			return &t.Ctx.Party[i]
		}
	}
	return nil
}

// pcAction reads a player's words in a fight.
func (t *offlineTurn) pcAction() agent.ToolCall {
	text := strings.ToLower(t.Words)
	words := tokens(text)
	switch {
	case reFlee.MatchString(text):
		return call("attempt_flee", map[string]any{})
	case reDefend.MatchString(text):
		return call("defend", map[string]any{})
	case reHeal.MatchString(text):
		target := ""
		best := 0
		for _, c := range t.Ctx.Combat.Combatants {
			if s := score(words, c.Name); c.Side == "party" && s > best {
				target, best = c.Entry, s
			}
		}
		if target == "" && t.Ctx.Actor != nil {
			target = engine.PCEntry(t.Ctx.Actor.Seat)
		}
		dice := "1d6"
		if t.Ctx.Actor != nil && t.Ctx.Actor.Class == "cleric" {
			dice = "2d8+2"
			if t.Ctx.Ruleset == engine.RulesetD20 {
				dice = "1d8+2"
			}
		}
		return call("heal", map[string]any{"target": target, "dice": dice})
	case reUse.MatchString(text):
		if me := t.me(); me != nil {
			var pick *agent.ItemRef
			best := -1
			for i := range me.Items {
				it := &me.Items[i]
				s := score(words, it.Name)
				if strings.Contains(strings.ToLower(it.Name), "potion") {
					s++ // a potion is what most people reach for
				}
				if s > best && (s > 0) {
					pick, best = it, s
				}
			}
			if pick != nil {
				return call("use_item", map[string]any{"item": pick.ID})
			}
		}
	}
	foes := t.foes()
	if len(foes) == 0 {
		return call("continue_combat", map[string]any{"narration": t.actorName() + " looks for a foe, but none still stands."})
	}
	target := foes[0]
	best := 0
	for _, f := range foes {
		if s := score(words, f.Name, f.Entry); s > best {
			target, best = f, s
		}
	}
	return call("attack", map[string]any{"target": target.Entry})
}

// foeReaction makes the next foe that has not acted this beat attack the
// weakest PC standing (narrative combat). At most three foes answer.
func (t *offlineTurn) foeReaction() (agent.ToolCall, bool) {
	acted := map[string]bool{}
	for _, s := range t.Steps {
		if a, _ := s.Args["attacker"].(string); a != "" {
			acted[a] = true
		}
	}
	if len(acted) >= 3 {
		return agent.ToolCall{}, false
	}
	var party []agent.CombatantView
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == "party" && c.CanAct {
			party = append(party, c)
		}
	}
	if len(party) == 0 {
		return agent.ToolCall{}, false
	}
	sort.SliceStable(party, func(i, j int) bool { return party[i].HP < party[j].HP })
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == "foes" && c.CanAct && !acted[c.Entry] && !t.downInThisTurn(c.Name) {
			return call("attack", map[string]any{"attacker": c.Entry, "target": party[0].Entry}), true
		}
	}
	return agent.ToolCall{}, false
}

// downInThisTurn reports whether an earlier step of this turn felled name.
func (t *offlineTurn) downInThisTurn(name string) bool {
	for _, s := range t.Steps {
		var o engine.AttackOutcome
		if s.Name == "attack" && !s.Err && json.Unmarshal([]byte(s.Result), &o) == nil && o.Target == name && o.Down != "" {
			return true
		}
	}
	return false
}

// foes returns the combatants standing against whoever acts.
func (t *offlineTurn) foes() []agent.CombatantView {
	mySide := "party"
	if t.Ctx.Kind == agent.TurnNPC {
		mySide = "foes"
		for _, c := range t.Ctx.Combat.Combatants {
			if t.Ctx.NPC != nil && c.Entry == engine.NPCEntry(t.Ctx.NPC.ID) {
				mySide = c.Side
			}
		}
	}
	var out []agent.CombatantView
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side != mySide && c.CanAct {
			out = append(out, c)
		}
	}
	return out
}

func (t *offlineTurn) allies() []agent.CombatantView {
	var out []agent.CombatantView
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == "foes" && c.CanAct && (t.Ctx.NPC == nil || c.Entry != engine.NPCEntry(t.Ctx.NPC.ID)) {
			out = append(out, c)
		}
	}
	return out
}

// npcAction decides an NPC's move from its profile (seed 000's rules:
// flee when badly hurt and cowardly, or when alone and told to; focus the
// weakest if its tactics say so; otherwise attack).
func (t *offlineTurn) npcAction() agent.ToolCall {
	p := t.Ctx.NPC
	if p == nil {
		return call("continue_combat", map[string]any{"narration": "The creature hesitates."})
	}
	tactics := strings.ToLower(p.Tactics + " " + p.Personality)
	hurt := p.MaxHP > 0 && p.HP*3 < p.MaxHP
	cowardly := strings.Contains(tactics, "coward") || strings.Contains(tactics, "flee")
	alone := len(t.allies()) == 0
	if (hurt && cowardly) || (alone && strings.Contains(tactics, "flees when alone") && p.HP < p.MaxHP) {
		return call("attempt_flee", map[string]any{})
	}
	if p.HP*2 < p.MaxHP {
		for _, it := range p.Items {
			if strings.Contains(strings.ToLower(it.Name), "potion") {
				return call("use_item", map[string]any{"item": it.ID})
			}
		}
	}
	foes := t.foes()
	if len(foes) == 0 {
		return call("continue_combat", map[string]any{"narration": p.Name + " finds no one left to fight."})
	}
	target := foes[0]
	if strings.Contains(tactics, "weakest") {
		sort.SliceStable(foes, func(i, j int) bool {
			if foes[i].HP != foes[j].HP {
				return foes[i].HP < foes[j].HP
			}
			return foes[i].Name < foes[j].Name
		})
		target = foes[0]
	} else {
		target = foes[int(fnvHash(t.key))%len(foes)]
	}
	return call("attack", map[string]any{"target": target.Entry})
}

func fnvHash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func (t *offlineTurn) weaponOf(name string) string {
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Name == name && c.Weapon != "" {
			return strings.ToLower(c.Weapon)
		}
	}
	return "weapon"
}

func (t *offlineTurn) rangedOf(name string) bool {
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Name == name {
			return c.Ranged
		}
	}
	return false
}

func (t *offlineTurn) combatNarration(l step) string {
	if l.Err {
		return t.pick("hes", "The moment slips away in confusion.", "A feint, a stumble: nothing comes of it.")
	}
	switch l.Name {
	case "attack":
		var o engine.AttackOutcome
		_ = json.Unmarshal([]byte(l.Result), &o)
		w := t.weaponOf(o.Attacker)
		var s string
		switch {
		case o.Result.Fumble:
			s = fmt.Sprintf("%s swings wildly with the %s and stumbles, off balance.", o.Attacker, w)
		case o.Result.Crit:
			s = fmt.Sprintf("A perfect strike! %s's %s tears into %s for %d damage.", o.Attacker, w, o.Target, o.Result.Damage)
		case o.Result.Hit && o.Result.Damage == 0:
			s = fmt.Sprintf("%s lands a blow on %s, but the armour takes it all.", o.Attacker, o.Target)
		case o.Result.Hit && t.rangedOf(o.Attacker):
			s = fmt.Sprintf("%s %s %s: the %s hits for %d damage.", o.Attacker, t.pick("shoot", "looses a shot at", "takes aim at", "fires at"), o.Target, w, o.Result.Damage)
		case o.Result.Hit:
			s = fmt.Sprintf("%s %s %s with the %s for %d damage.", o.Attacker, t.pick("hitverb", "catches", "cuts", "batters", "strikes"), o.Target, w, o.Result.Damage)
		case t.rangedOf(o.Attacker):
			s = fmt.Sprintf("%s's shot from the %s goes wide of %s.", o.Attacker, w, o.Target)
		default:
			s = fmt.Sprintf("%s %s; the %s finds only air.", o.Target, t.pick("dodge", "twists aside", "ducks", "sidesteps"), w)
		}
		switch o.Down {
		case engine.StatusDead:
			s += " " + o.Target + t.pick("dead", " crumples and does not rise.", " falls, lifeless.")
		case engine.StatusUnconscious:
			s += " " + o.Target + " collapses, senseless."
		default:
			if o.Result.Hit {
				s += fmt.Sprintf(" (%s: %d/%d HP)", o.Target, o.HP, o.MaxHP)
			}
		}
		return s
	case "use_item":
		var r struct {
			Used   string             `json:"used"`
			By     string             `json:"by"`
			Healed engine.HealOutcome `json:"healed"`
		}
		_ = json.Unmarshal([]byte(l.Result), &r)
		if r.Healed.Target == r.By {
			return fmt.Sprintf("%s %s and recovers %d HP (%d/%d).", r.By, t.pick("drink", "gulps down a remedy", "drinks deep"), r.Healed.Amount, r.Healed.HP, r.Healed.MaxHP)
		}
		return fmt.Sprintf("%s tends to %s: +%d HP (%d/%d).", r.By, r.Healed.Target, r.Healed.Amount, r.Healed.HP, r.Healed.MaxHP)
	case "heal":
		var r engine.HealOutcome
		_ = json.Unmarshal([]byte(l.Result), &r)
		return fmt.Sprintf("%s %s: %s recovers %d HP (%d/%d).", t.actorOrNPC(), t.pick("pray", "calls on the light", "murmurs a prayer", "works quickly"), r.Target, r.Amount, r.HP, r.MaxHP)
	case "defend":
		return t.actorOrNPC() + t.pick("def", " raises a guard and waits for the blow.", " sets their feet and watches for an opening.")
	case "attempt_flee":
		var r struct {
			Fled bool   `json:"fled"`
			Who  string `json:"who"`
		}
		_ = json.Unmarshal([]byte(l.Result), &r)
		if r.Fled {
			return r.Who + t.pick("fled", " breaks away and escapes!", " bolts and is gone.")
		}
		return r.Who + " tries to break away, but is cut off."
	}
	return "The fight goes on."
}

func (t *offlineTurn) actorOrNPC() string {
	if t.Ctx.NPC != nil {
		return t.Ctx.NPC.Name
	}
	return t.actorName()
}

func (t *offlineTurn) bookend() string {
	cb := t.Ctx.Combat
	var foes, party []string
	for _, c := range cb.Combatants {
		if !c.CanAct {
			continue
		}
		s := fmt.Sprintf("%s %d/%d", c.Name, c.HP, c.MaxHP)
		if c.Side == "foes" {
			foes = append(foes, s)
		} else {
			party = append(party, s)
		}
	}
	scene := t.pick("scene", "Smoke drifts across the yard.", "Boots slide in the mud.", "Somewhere a crow screams.", "Breath steams in the cold air.")
	if cb.Round == 1 {
		return fmt.Sprintf("Round 1 at %s. %s Facing you: %s.", locName(t), scene, fmtList(foes))
	}
	return fmt.Sprintf("Round %d. %s Still standing: %s against %s.", cb.Round, scene, fmtList(party), fmtList(foes))
}

func locName(t *offlineTurn) string {
	if t.Ctx.Location != nil {
		return t.Ctx.Location.Name
	}
	return "the battlefield"
}

func (t *offlineTurn) ending(outcome string) string {
	switch outcome {
	case engine.OutcomePlayerWin:
		return t.pick("win", "The last foe falls. Silence returns, broken only by ragged breathing.", "It is over. You stand among the fallen, victorious.")
	case engine.OutcomeNPCFlee:
		return "Your remaining foes scatter into the shadows. The field is yours."
	case engine.OutcomePlayerFlee:
		return "You break away and run, the sounds of the fight fading behind you."
	case engine.OutcomePlayerDie:
		return "The last of you falls. Darkness takes the party..."
	}
	return "The fight ends."
}
