package agent

import (
	"reflect"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/engine"
)

// trickyStrings are strings whose JSON needs every kind of escape
// encoding/json makes.
var trickyStrings = []string{"", "Goblin 2", `"quoted" \ back`, "<b>&amp;</b>", "line\nbreak\r\ttab\b\f\x00\x1f\x7f",
	"café ☕ 𝄞", "\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", "</context>"}

// fillTurnContext sets every field of v, recursively: strings from
// trickyStrings (turned by seed), numbers, flags, slices of two, pointers
// to filled values. With empty set it leaves slices empty but not nil.
func fillTurnContext(v reflect.Value, seed int, empty bool) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(trickyStrings[seed%len(trickyStrings)])
	case reflect.Int:
		v.SetInt(int64(seed*7 - 20))
	case reflect.Bool:
		v.SetBool(seed%2 == 0)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillTurnContext(v.Elem(), seed+1, empty)
	case reflect.Slice:
		n := 2
		if empty {
			n = 0
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillTurnContext(v.Index(i), seed+i+1, empty)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillTurnContext(v.Field(i), seed+i, empty)
		}
	}
}

// TestTurnContextJSON: the context block of a turn message reads back as
// the context it was written from (ReadTurnMessage, how the offline
// narrator reads a turn), whatever its strings hold: quotes, controls,
// invalid UTF-8 (read back as U+FFFD) or "</context>", which must not
// close the block early.
func TestTurnContextJSON(t *testing.T) {
	cases := map[string]TurnContext{"zero": {}}
	for seed := range len(trickyStrings) {
		var full, empty TurnContext
		fillTurnContext(reflect.ValueOf(&full).Elem(), seed, false)
		fillTurnContext(reflect.ValueOf(&empty).Elem(), seed, true)
		cases["full "+trickyStrings[seed]] = full
		cases["empty lists "+trickyStrings[seed]] = empty
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			msg := turnMessage(&tc)
			if strings.Count(msg, contextClose) != 1 {
				t.Fatalf("a value closes the context block:\n%s", msg)
			}
			got, _, err := ReadTurnMessage(msg)
			if err != nil {
				t.Fatalf("ReadTurnMessage: %v\n%s", err, msg)
			}
			want := readBack(t, tc)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// turnMessage is a turn message holding only c's context block.
func turnMessage(c *TurnContext) string {
	return string(append(c.appendJSON([]byte("Turn 1.\n"+contextOpen)), contextClose+"\n"...))
}

// readBack is what reading tc back must give: its strings valid UTF-8
// (encoding/json writes each invalid byte as U+FFFD), its empty lists
// that are omitted when empty nil.
func readBack(t *testing.T, tc TurnContext) TurnContext {
	t.Helper()
	normalize(reflect.ValueOf(&tc).Elem())
	return tc
}

func normalize(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(validUTF8(v.String()))
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			normalize(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if tag := v.Type().Field(i).Tag.Get("json"); f.Kind() == reflect.Slice && f.Len() == 0 && strings.Contains(tag, "omitempty") {
				f.SetZero()
			}
			normalize(f)
		}
	}
}

// validUTF8 replaces each byte of s that is not valid UTF-8 with U+FFFD.
func validUTF8(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // ranging yields U+FFFD for each invalid byte
	}
	return b.String()
}

func FuzzTurnContextJSON(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tc := TurnContext{Kind: s, Location: &LocationView{Description: s, NPCs: []NPCBrief{{Name: s, Statuses: []string{s}}}}}
		msg := turnMessage(&tc)
		got, _, err := ReadTurnMessage(msg)
		if err != nil {
			t.Fatalf("ReadTurnMessage: %v\n%s", err, msg)
		}
		if want := validUTF8(s); got.Kind != want || got.Location.Description != want || got.Location.NPCs[0].Name != want || got.Location.NPCs[0].Statuses[0] != want {
			t.Errorf("read back %+v, want each string %q", got, want)
		}
	})
}

// benchFight is a fight at the mill, two characters against Snikket, on
// Snikket's turn: the largest context a turn message carries.
func benchFight(b *testing.B) *Turn {
	lib, err := adventures.Load()
	if err != nil {
		b.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100}, adv, lib.Catalogue, 3)
	d := engine.NewDice(3)
	for _, c := range []struct{ id, seat, name, class string }{{"c1", "1", "Aldric", "warrior"}, {"c2", "2", "Brina", "cleric"}} {
		if _, err := st.AddCharacter(d, c.id, c.seat, "p"+c.seat, engine.NewCharacterSpec{Name: c.name, Class: c.class}); err != nil {
			b.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		b.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		b.Fatal(err)
	}
	tn := &Turn{No: 12, Kind: TurnNPC, State: st, Dice: d}
	tn.Entry, _ = st.Game.Combat.Entry("dm:snikket")
	return tn
}

// BenchmarkTurnMessage builds a turn's context and its user message, the
// <context> block's JSON included: once per turn. encoding/json replaced a
// hand-written encoder here: 8.8 → 14.1 µs of CPU per op (medians of 18
// runs, two binaries alternated, load average 13–18). With the messages'
// 4.2 → 8.5 µs (BenchmarkMessagesJSON), a turn pays about 10 µs more, 1.1
// to 1.3 % of the server's 760–890 µs of CPU per action (saturated play
// runs, offline model): short of the 5 % a hand encoder must buy.
func BenchmarkTurnMessage(b *testing.B) {
	tn := benchFight(b)
	cpu := processCPU(b)
	for b.Loop() {
		ctx := tn.context()
		_ = tn.userMessage(&ctx)
	}
	b.ReportMetric(float64((processCPU(b)-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
