package offline

// Session start: a character's backstory comes to life (seed 001): the
// heirlooms it names become items, the people it names NPCs who love the
// character.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

var (
	reHeirloom = regexp.MustCompile(`(?i)\b(?:my|his|her|their)\s+((?:(?:late|dead|old)\s+)?(?:father|mother|grandfather|grandmother|uncle|aunt|brother|sister|mentor|master|teacher)'s\s+)?((?:old|rusty|silver|golden|battered|trusty|enchanted|broken|worn|carved|little)\s+)?(sword|blade|longsword|dagger|knife|axe|bow|staff|ring|amulet|locket|book|shield|mace|hammer|cloak|pendant|lute|flute|compass|map)\b`)
	reRelative = regexp.MustCompile(`\b(?:[Mm]y|[Hh]is|[Hh]er|[Tt]heir)\s+(?:(?:older|younger|little|big|twin|elder|dear)\s+)?(sister|brother|mother|father|uncle|aunt|cousin|friend|mentor|daughter|son|grandmother|grandfather|wife|husband)\s*,?\s*(?:named|called|is)?\s*,?\s*([A-Z][a-z]{1,20})`)
)

var heirloomTemplate = map[string]string{
	"sword": "longsword", "blade": "longsword", "longsword": "longsword", "dagger": "dagger", "knife": "dagger",
	"axe": "handaxe", "bow": "shortbow", "staff": "quarterstaff", "mace": "mace", "hammer": "mace",
}

type heirloom struct{ name, noun, owner, adjective string }

func parseHeirlooms(text string) []heirloom {
	var out []heirloom
	seen := map[string]bool{}
	for _, m := range reHeirloom.FindAllStringSubmatch(text, -1) {
		h := heirloom{owner: strings.TrimSpace(m[1]), adjective: strings.TrimSpace(m[2]), noun: strings.ToLower(m[3])}
		h.name = titleCase(strings.TrimSpace(strings.Join(strings.Fields(h.owner+" "+h.adjective+" "+h.noun), " ")))
		if !seen[h.name] {
			seen[h.name] = true
			out = append(out, h)
		}
	}
	return out
}

type relative struct{ kind, name string }

func parseRelatives(text string) []relative {
	var out []relative
	seen := map[string]bool{}
	for _, m := range reRelative.FindAllStringSubmatch(text, -1) {
		if !seen[m[2]] && m[2] != "I" {
			seen[m[2]] = true
			out = append(out, relative{kind: strings.ToLower(m[1]), name: m[2]})
		}
	}
	return out
}

func titleCase(s string) string {
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

// startSession brings a backstory to life: each heirloom becomes an item
// with a buff (and a flaw if it is old or broken), each named relative an
// NPC in the starting town who loves the character.
func (t *offlineTurn) startSession() reply {
	items, people := firstN(parseHeirlooms(t.Words), 2), firstN(parseRelatives(t.Words), 2)
	if c, ok := t.nextHeirloom(items); ok {
		return c
	}
	if c, ok := t.equipHeirloom(); ok {
		return c
	}
	if c, ok := t.nextRelative(people); ok {
		return c
	}
	return t.respond(t.sessionIntro(items, people), t.hints())
}

// equipHeirloom puts the first heirloom weapon made this turn in the
// character's hand: an heirloom sword is the sword they fight with.
func (t *offlineTurn) equipHeirloom() (reply, bool) {
	if _, done := t.stepNamed("equip_item"); done {
		return reply{}, false
	}
	for _, s := range t.Steps {
		if s.Name != "create_item_for_player" || s.Err {
			continue
		}
		made := decodeStep[struct {
			ID       string `json:"instance_id"`
			Template string `json:"template"`
		}](s)
		for _, tpl := range heirloomTemplate {
			if made.ID != "" && made.Template == tpl {
				return call("equip_item", map[string]any{"item": made.ID}), true
			}
		}
	}
	return reply{}, false
}

func firstN[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// nextHeirloom returns the call that makes the next heirloom not made
// yet: its template first when the catalogue has none for its noun.
func (t *offlineTurn) nextHeirloom(items []heirloom) (reply, bool) {
	templatesMade := map[string]string{}
	for _, s := range t.Steps {
		if s.Name == "create_item_template" && !s.Err {
			templatesMade[s.arg("name").(string)] = decodeStep[struct {
				ID string `json:"id"`
			}](s).ID
		}
	}
	for _, h := range items {
		if _, done := t.stepWith("create_item_for_player", "name", h.name); done {
			continue
		}
		tpl, ok := heirloomTemplate[h.noun]
		if !ok {
			tname := titleCase(h.noun)
			if id, ok := templatesMade[tname]; ok {
				tpl = id
			} else {
				if _, tried := t.stepNamed("create_item_template"); !tried || len(templatesMade) < len(items) {
					return call("create_item_template", map[string]any{"name": tname, "category": "trinket", "description": "A keepsake from home.", "value": 5}), true
				}
				continue
			}
		}
		return call("create_item_for_player", heirloomArgs(h, tpl)), true
	}
	return reply{}, false
}

// heirloomArgs makes an heirloom of template tpl: a buff (and the memory
// of its owner), and a flaw if it is old or broken.
func heirloomArgs(h heirloom, tpl string) map[string]any {
	buffs := []string{"heirloom: +1 morale"}
	if h.owner != "" {
		buffs = append(buffs, "carries "+strings.TrimSuffix(strings.ToLower(h.owner), "'s")+"'s memory")
	}
	args := map[string]any{"template": tpl, "name": h.name, "buffs": buffs}
	switch h.adjective {
	case "old", "rusty", "battered", "broken", "worn":
		args["flaws"] = []string{"worn with age"}
	}
	return args
}

// nextRelative returns the call that brings the next named person to
// life: created in the starting town, then fond of the character.
func (t *offlineTurn) nextRelative(people []relative) (reply, bool) {
	for _, p := range people {
		created, ok := t.stepWith("create_npc", "name", p.name)
		if !ok {
			return call("create_npc", map[string]any{"name": p.name, "kind": p.kind, "location": t.Ctx.Start,
				"personality": "loving, worried for " + t.actorName(), "behavior": "friendly"}), true
		}
		if created.Err {
			continue
		}
		id := decodeStep[struct {
			ID string `json:"id"`
		}](created).ID
		if _, related := t.stepWith("update_relationship", "b", id); !related {
			return call("update_relationship", map[string]any{"b": id, "delta": 30}), true
		}
	}
	return reply{}, false
}

// sessionIntro narrates the arrival: who the character is, where they
// arrive and what they see there, with what the backstory made (nothing
// when there is no backstory).
func (t *offlineTurn) sessionIntro(items []heirloom, people []relative) string {
	var made, met []string
	for _, h := range items {
		if _, done := t.stepWith("create_item_for_player", "name", h.name); done {
			made = append(made, h.name)
		}
	}
	for _, p := range people {
		if created, ok := t.stepWith("create_npc", "name", p.name); ok && !created.Err {
			met = append(met, fmt.Sprintf("your %s %s", p.kind, p.name))
		}
	}
	who := t.actorName()
	if a := t.Ctx.Actor; a != nil && a.Class != "" {
		who += " the " + a.Class
	}
	s := fmt.Sprintf("%s arrives in %s as the light fails.", who, locName(t))
	if l := t.Ctx.Location; l != nil {
		if d := strings.TrimSpace(l.Description); d != "" {
			s += " " + d
		}
		if p := t.peopleSentence(); p != "" {
			s += " " + p
		}
		if i := t.itemsSentence(); i != "" {
			s += " " + i
		}
		if len(l.Exits) > 0 {
			s += " Ways on: " + t.exitList() + "."
		}
	}
	if len(made) > 0 {
		s += fmt.Sprintf(" At your side: %s, heavy with memories.", strings.ToLower(strings.Join(made, " and ")))
	}
	if len(met) > 0 {
		s += fmt.Sprintf(" By the well, %s waits for you, relief on their face.", strings.Join(met, " and "))
	}
	return s
}
