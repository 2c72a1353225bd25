package offline

// Talk: NPCs answer in their own voice and manner; they follow the party
// if they like the character, resent threats, and hand out quests.

import (
	"fmt"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// Topics an NPC answers on: what the words ask about.
var (
	secretWords  = wordList{"secret", "secrets", "hiding", "hide", "truth", "confess", "really", "lying", "lie"}
	factionWords = wordList{"faction", "factions", "guild", "side", "sides", "loyal", "loyalty", "allies", "ally", "serve", "masters", "master", "boss", "council", "who do you work"}
	rumourWords  = wordList{"rumor", "rumour", "rumours", "rumors", "news", "gossip", "heard", "happening", "going on"}
)

// dialogue voices an NPC from get_npc_info's result: what it says
// depends on what is asked (the quest, its secret, rumours, trade, its
// faction) and on its profile (its lines, personality, faction and how it
// feels about the party). A secret is never told from the profile: only
// the NPC's own "secret" line, and only to a party it is fond of.
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
		return fmt.Sprintf("%s answers with a snarl. Words will not settle this.", name)
	}
	if here, _ := n["here"].(bool); !here {
		return fmt.Sprintf("%s is not here to hear you.", name)
	}
	disposition, _ := n["disposition"].(float64)
	faction, _ := n["faction"].(string)
	text := strings.ToLower(t.Words)
	var said []string
	switch {
	case secretWords.in(text):
		if s := lines["secret"]; s != "" && disposition >= 50 {
			said = append(said, s)
		} else if n["secret"] != nil && n["secret"] != "" {
			return fmt.Sprintf("%s %s: \"%s\"", name, guardedly(personality, t), t.pick("secret",
				"That is nobody's business but mine.", "Some doors stay shut, friend. Ask me something else.",
				"You want my secrets? Earn my trust first."))
		} else {
			said = append(said, "Secrets? I have none worth your time.")
		}
	case factionWords.in(text) || faction != "" && score(tokens(text), faction) > 0:
		switch {
		case lines["faction"] != "":
			said = append(said, lines["faction"])
		case faction != "":
			said = append(said, fmt.Sprintf("I stand with %s%s.", faction, t.pick("fac", ", and I will not hear a word against them", "; that is all you need to know", ", as my kin did before me")))
		default:
			said = append(said, "I answer to nobody but myself.")
		}
	case tradeWords.in(text):
		if tr := lines["trade"]; tr != "" {
			said = append(said, tr)
		} else {
			said = append(said, "I'm no trader. Find a shop for that.")
		}
	case questWords.in(text) && !rumourWords.in(text):
		if r := lines["rumour"]; r != "" && lines["quest"] != "" {
			said = append(said, r)
		}
		if q := lines["quest"]; q != "" {
			said = append(said, q)
		} else if qs, ok := n["quests"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				said = append(said, fmt.Sprintf("%s: %v", q["name"], q["description"]))
			}
		} else if r := lines["rumour"]; r != "" {
			said = append(said, r)
		}
	case rumourWords.in(text):
		if r := lines["rumour"]; r != "" {
			said = append(said, r)
		} else {
			said = append(said, "I hear nothing worth repeating.")
		}
	case aboutWords.in(text):
		// A topic the NPC knows nothing of: say what it can talk about,
		// rather than the same speech again.
		return fmt.Sprintf("%s %s: \"%s\"", name, manner, unknownTopic(lines))
	default:
		if g := lines["greet"]; g != "" {
			said = append(said, g)
		}
		if r := lines["rumour"]; r != "" && t.pick("rum", "y", "n") == "y" {
			said = append(said, r)
		}
	}
	if len(said) == 0 {
		said = append(said, "Hm. What do you want?")
	}
	if disposition < 0 {
		manner = t.pick("cold", "eyes you coldly and says", "answers curtly")
	}
	return fmt.Sprintf("%s %s: \"%s\"", name, manner, strings.Join(said, " "))
}

// guardedly is how an NPC refuses to tell its secret, by its personality.
func guardedly(personality string, t *offlineTurn) string {
	p := strings.ToLower(personality)
	switch {
	case strings.Contains(p, "nervous") || strings.Contains(p, "coward"):
		return "goes pale and stammers"
	case strings.Contains(p, "sharp") || strings.Contains(p, "cunning") || strings.Contains(p, "sly"):
		return "smiles thinly"
	case strings.Contains(p, "blunt") || strings.Contains(p, "proud"):
		return "folds their arms"
	}
	return t.pick("guard", "looks away and says", "hesitates, then says")
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

// follow: an NPC follows the party if it likes the character enough
// (relationship above 25).
func (t *offlineTurn) follow(n *agent.NPCBrief) reply {
	rel, ok := t.stepNamed("get_relationship")
	if !ok {
		return call("get_relationship", map[string]any{"b": n.ID})
	}
	if msg, bad := t.failed(); bad {
		return t.respond(msg, t.hints())
	}
	v := decodeStep[struct{ Value int }](rel).Value
	if v <= 25 {
		return t.respond(fmt.Sprintf("%s shakes their head. \"I don't know you well enough for that.\"", n.Name), t.hints())
	}
	if _, ok := t.stepNamed("update_npc_behavior"); !ok {
		return call("update_npc_behavior", map[string]any{"npc": n.ID, "behavior": "following"})
	}
	if _, ok := t.stepNamed("update_npc_disposition"); !ok {
		return call("update_npc_disposition", map[string]any{"npc": n.ID, "delta": 5})
	}
	return t.respond(fmt.Sprintf("%s nods, pleased to be asked, and falls in beside you. \"Lead on.\"", n.Name), t.hints())
}

// threaten: the NPC turns defensive, likes the party less, and resents the
// character.
func (t *offlineTurn) threaten(n *agent.NPCBrief) reply {
	for _, c := range []reply{
		call("update_npc_behavior", map[string]any{"npc": n.ID, "behavior": "defensive"}),
		call("update_npc_disposition", map[string]any{"npc": n.ID, "delta": -15}),
		call("update_relationship", map[string]any{"b": n.ID, "delta": -25}),
	} {
		if _, done := t.stepNamed(c.name); !done {
			return c
		}
	}
	return t.respond(fmt.Sprintf("%s stiffens and steps back, hand drifting to a weapon. \"Careful,\" %s says coldly. \"I'll remember this.\"", n.Name, n.Name), t.hints())
}

type questView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Giver        string `json:"giver"`
	Status       string `json:"status"`
	Requires     string `json:"requires"`
	RequiresName string `json:"requires_name"`
}

// accept: take on the first quest offered by an NPC here.
func (t *offlineTurn) accept() reply {
	qs, ok := t.stepNamed("get_player_quests")
	if !ok {
		return call("get_player_quests", map[string]any{})
	}
	here := map[string]string{}
	if t.Ctx.Location != nil {
		for _, n := range t.Ctx.Location.NPCs {
			here[n.ID] = n.Name
		}
	}
	var quest *questView
	for _, q := range decodeStep[[]questView](qs) {
		if _, ok := here[q.Giver]; ok && q.Status == engine.QuestOffered {
			quest = &q
			break
		}
	}
	if quest == nil {
		return t.respond("Nobody here has offered you a task to accept.", t.hints())
	}
	if _, ok := t.stepNamed("update_quest_status"); !ok {
		return call("update_quest_status", map[string]any{"quest": quest.ID, "status": engine.QuestActive})
	}
	return t.respond(fmt.Sprintf("%s clasps your hand. The quest is yours: %s.", here[quest.Giver], quest.Name), t.hints())
}

var aboutWords = wordList{"about", "regarding", "concerning"}

// unknownTopic is an NPC's answer to a question it cannot answer: what it
// can talk about instead.
func unknownTopic(lines map[string]string) string {
	var topics []string
	if lines["quest"] != "" || lines["rumour"] != "" {
		topics = append(topics, "the trouble hereabouts (ask about work or news)")
	}
	if lines["trade"] != "" {
		topics = append(topics, "what I have for sale")
	}
	if lines["faction"] != "" {
		topics = append(topics, "who I stand with")
	}
	if len(topics) == 0 {
		return "I know nothing of that, friend."
	}
	return "I know nothing of that. Ask me about " + strings.Join(topics, ", or ") + "."
}
