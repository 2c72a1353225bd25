package adventures

import (
	"os"
	"strings"
	"testing"
)

// small is a valid adventure; each case below breaks one thing in it.
const small = `id: cellar
name: The Cellar
summary: Rats in the cellar.
intro: The innkeeper needs help.
start: inn
locations:
  - id: inn
    name: The Inn
    exits:
      - {to: cellar, name: the trapdoor}
  - id: cellar
    name: The Cellar
    exits:
      - {to: inn, name: up the ladder}
npcs:
  - id: host
    name: Hal
    location: inn
    hp: 10
  - id: rat
    name: Rat king
    location: cellar
    hostile: true
    hp: 8
item_templates:
  - {id: cheese, name: Old cheese, category: quest, value: 2}
items:
  - {id: cheese-1, template: cheese, name: Old cheese, owner_type: npc, owner_id: rat}
shops:
  - keeper: host
    name: The bar
    buys_at: 50
    stock:
      - {item: bread, price: 1, count: 2}
quests:
  - {id: rats, name: Rats, giver: host, requires: cheese, reward_gold: 5}
encounters:
  - {id: king, location: cellar, foes: [rat]}
`

func TestParseSmall(t *testing.T) {
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	a, problems := Parse([]byte(small), lib.Catalogue)
	if len(problems) > 0 {
		t.Fatalf("the small adventure has problems: %v", problems)
	}
	if a.ID != "cellar" || len(a.Shops) != 1 || len(a.Encounters) != 1 {
		t.Errorf("parsed %+v", a)
	}
}

func TestParseProblems(t *testing.T) {
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, from, to string
		line           int
		path, says     string
	}{
		{"exit to a missing location", "{to: cellar, name: the trapdoor}", "{to: attic, name: the trapdoor}", 10, "locations[0].exits[0].to", `Exit to "attic", but no location has that id`},
		{"duplicate location id", "  - id: cellar\n    name: The Cellar", "  - id: inn\n    name: The Cellar", 11, "locations[1].id", `Another location already has the id "inn" (line 7)`},
		{"duplicate NPC id", "  - id: rat\n", "  - id: host\n", 20, "npcs[1].id", `Another NPC already has the id "host"`},
		{"NPC placed nowhere", "    location: inn\n    hp: 10", "    hp: 10", 16, "npcs[0]", "host is placed nowhere"},
		{"NPC at a missing location", "    location: inn\n    hp: 10", "    location: kitchen\n    hp: 10", 18, "npcs[0].location", `stands at "kitchen"`},
		{"quest item missing", "requires: cheese", "requires: amulet", 36, "quests[0].requires", `The quest requires "amulet"`},
		{"quest item placed nowhere", "  - {id: cheese-1, template: cheese, name: Old cheese, owner_type: npc, owner_id: rat}\n", "", 35, "quests[0].requires", "No item of \"cheese\" is placed anywhere"},
		{"shop selling an unknown item", "{item: bread, price: 1, count: 2}", "{item: mead, price: 1, count: 2}", 34, "shops[0].stock[0].item", `The shop sells "mead"`},
		{"shop kept by nobody", "keeper: host", "keeper: ghost", 30, "shops[0].keeper", `No NPC "ghost" to keep this shop`},
		{"text over its limit", "summary: Rats in the cellar.", "summary: " + strings.Repeat("rat ", 80), 3, "summary", "The summary is 319 characters; the limit is 300"},
		{"YAML syntax error", "    name: The Inn\n", "    name: [The Inn\n", 8, "", "YAML syntax error"},
		{"unknown field", "    hp: 8\n", "    hp: 8\n    hitpoints: 8\n", 25, "npcs[1].hitpoints", `Unknown field "hitpoints" in an NPC`},
		{"a word where a number goes", "    hp: 10", "    hp: ten", 19, "npcs[0].hp", `"ten" is not a whole number`},
		{"start missing", "start: inn", "start: hall", 5, "start", `The start location "hall" does not exist`},
		{"bad id", "id: cellar\nname", "id: The Cellar!\nname", 1, "id", `may only hold lower-case letters`},
		{"encounter foe elsewhere", "foes: [rat]", "foes: [host]", 38, "encounters[0].foes[0]", `host stands at "inn", not at "cellar"`},
		{"hostile shopkeeper", "    name: Hal\n    location: inn", "    name: Hal\n    hostile: true\n    location: inn", 31, "shops[0].keeper", "host is hostile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(small, tc.from) {
				t.Fatalf("the small adventure has no %q", tc.from)
			}
			src := strings.Replace(small, tc.from, tc.to, 1)
			a, problems := Parse([]byte(src), lib.Catalogue)
			if a != nil {
				t.Fatal("parsed with no problem")
			}
			for _, p := range problems {
				if strings.Contains(p.Message, tc.says) {
					if p.Line != tc.line || p.Path != tc.path {
						t.Errorf("got line %d path %q, want line %d path %q: %s", p.Line, p.Path, tc.line, tc.path, p.Message)
					}
					if !strings.HasSuffix(p.Message, ".") {
						t.Errorf("not a sentence: %q", p.Message)
					}
					return
				}
			}
			t.Errorf("no problem saying %q; got %+v", tc.says, problems)
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	src := strings.NewReplacer("{to: cellar, name: the trapdoor}", "{to: attic, name: the trapdoor}",
		"requires: cheese", "requires: amulet", "{item: bread,", "{item: mead,").Replace(small)
	_, problems := Parse([]byte(src), nil)
	if len(problems) != 3 {
		t.Errorf("want 3 problems at once, got %+v", problems)
	}
	for i := 1; i < len(problems); i++ {
		if problems[i].Line < problems[i-1].Line {
			t.Errorf("problems out of line order: %+v", problems)
		}
	}
}

func TestParseLimits(t *testing.T) {
	big := small + "# " + strings.Repeat("x", MaxBytes) + "\n"
	if _, p := Parse([]byte(big), nil); len(p) != 1 || !strings.Contains(p[0].Message, "the limit is 256 KiB") {
		t.Errorf("oversize: %+v", p)
	}
	var b strings.Builder
	b.WriteString("id: many\nname: Many\nintro: i\nstart: l0\nlocations:\n")
	for i := range MaxLocations + 1 {
		b.WriteString("  - {id: l" + itoa(i) + ", name: L}\n")
	}
	_, p := Parse([]byte(b.String()), nil)
	if len(p) != 1 || !strings.Contains(p[0].Message, "301 locations; the limit is 300") {
		t.Errorf("too many locations: %+v", p)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

// TestDocsExample parses the complete example of docs/adventures.md.
func TestDocsExample(t *testing.T) {
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../docs/adventures.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	src, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml block in docs/adventures.md")
	}
	if _, problems := Parse([]byte(src), lib.Catalogue); len(problems) > 0 {
		t.Errorf("the docs' example has problems: %+v", problems)
	}
	if string(Starter()) != src {
		t.Error("the editor's starter (starter/rat-cellar.yaml) differs from the docs' example")
	}
}
