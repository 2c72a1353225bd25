package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEventJSON pins the wire: each constructor's event encodes to the
// bytes the call sites wrote before the constructors existed (taken from
// that code, map literals and all).
func TestEventJSON(t *testing.T) {
	ip := func(v int) *int { return &v }
	roll := Roll{Roller: "Snikket", Purpose: "attack on Brunhild", Notation: "1d100+2", Rolls: []int{55}, Modifier: 2, Total: 57}
	cb := &Combat{ID: "cb1", Location: "mill", Order: []Combatant{
		{Entry: BookendEntry, Kind: KindBookend, Name: "DM"},
		{Entry: "pc:1", Kind: KindPC, Ref: "c1", Name: "Brunhild", Initiative: 85, Mod: 2},
		{Entry: "dm:snikket", Kind: KindNPC, Ref: "snikket", Name: "Snikket"},
	}}
	ann := Player{ID: "p1", Name: "Ann"}
	brunhild := &Character{ID: "c1", Name: "Brunhild", XP: 120, Level: 2}
	elira := &NPC{Name: "Elira", Location: "square", Behavior: "following"}
	for _, tc := range []struct {
		name string
		ev   Event
		want string
	}{
		{"dice", DiceEvent(roll),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"dice","data":{"modifier":2,"notation":"1d100+2","purpose":"attack on Brunhild","roller":"Snikket","rolls":[55],"total":57}}`},
		{"dice, attack against 0", DiceEvent(Roll{Roller: "Aldric", Purpose: "attack on Snikket", Notation: "1d20+3", Rolls: []int{12}, Modifier: 3, Total: 15, Against: 0, Outcome: "hit"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"dice","data":{"against":0,"modifier":3,"notation":"1d20+3","outcome":"hit","purpose":"attack on Snikket","roller":"Aldric","rolls":[12],"total":15}}`},
		{"dice, advantage", DiceEvent(Roll{Roller: "Aldric", Purpose: "attack on Snikket", Notation: "2d20kh1+3", Rolls: []int{4, 17}, Modifier: 3, Total: 20, Kept: 17, Against: 14, Outcome: "hit"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"dice","data":{"against":14,"kept":17,"modifier":3,"notation":"2d20kh1+3","outcome":"hit","purpose":"attack on Snikket","roller":"Aldric","rolls":[4,17],"total":20}}`},
		{"mode combat", ModeEvent(ModeCombat),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"mode","data":{"mode":"combat"}}`},
		{"status removed", StatusRemovedEvent("Vesna", StatusDefending),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"status","data":{"removed":["defending"],"target":"Vesna"}}`},
		{"status added", StatusAddedEvent("Vesna", StatusOffBalance),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"status","data":{"added":["off-balance"],"target":"Vesna"}}`},
		{"effect", EffectEvent("Vesna", "poisoned", 3),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"status","data":{"added":["poisoned"],"rounds":3,"target":"Vesna"}}`},
		{"turn skipped", TurnSkippedEvent("Vesna", EffectStunned),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"status","data":{"reason":"stunned","skipped_turn":true,"target":"Vesna"}}`},
		{"damage", DamageEvent("Snikket", 12, 6, 18),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"damage","data":{"amount":12,"hp":6,"max_hp":18,"target":"Snikket"}}`},
		{"heal", HealEvent("Brunhild", 1, 1, 45),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"heal","data":{"amount":1,"hp":1,"max_hp":45,"target":"Brunhild"}}`},
		{"party at", PartyAtEvent("square"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"location":"square"}}`},
		{"party moved", PartyMovedEvent(&Location{ID: "mill", Name: "The Old Mill"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"location":"mill","name":"The Old Mill"}}`},
		{"item added", ItemAddedEvent("c1", &Item{ID: "i7", Name: "Bone totem"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"inventory":{"added":"Bone totem","character_id":"c1","item_id":"i7"}}}`},
		{"item removed", ItemRemovedEvent("c1", &Item{ID: "i8", Name: "Potion"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"inventory":{"character_id":"c1","item_id":"i8","removed":"Potion"}}}`},
		{"relationship", RelationshipEvent("Brunhild", "Elira", -20),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"relationship":{"a":"Brunhild","b":"Elira","value":-20}}}`},
		{"npc moved", NPCMovedEvent("Elira", &Location{ID: "mill", Name: "The Old Mill"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"location_name":"The Old Mill","npc":"Elira","npc_location":"mill"}}`},
		{"npc created", NPCCreatedEvent(elira),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"created":true,"npc":"Elira","npc_location":"square"}}`},
		{"quest", QuestEvent(&Quest{ID: "q1", Name: "The Mill", Status: "active"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"quest":{"id":"q1","name":"The Mill","status":"active"}}}`},
		{"location created", LocationCreatedEvent(&Location{ID: "cellar", Name: "The Cellar"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"name":"The Cellar","new_location":"cellar"}}`},
		{"gold", GoldEvent("c1", -5, 10, "a bribe"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"gold":{"change":-5,"character_id":"c1","gold":10,"reason":"a bribe"}}}`},
		{"xp", XPEvent(brunhild, 20),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"xp":{"character_id":"c1","gain":20,"level":2,"xp":120}}}`},
		{"npc behavior", NPCBehaviorEvent(elira),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"behavior":"following","npc":"Elira"}}`},
		{"combat ended", CombatEndedEvent(CombatResult{CombatID: "cb1", Outcome: OutcomePlayerWin, XP: 50, Gold: 3, Loot: []string{"Lantern"}, Defeated: []string{"Snikket"}}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"combat_ended","data":{"combat_id":"cb1","outcome":"player_win","rewards":{"gold":3,"loot":["Lantern"],"xp":50}}}`},
		{"combat ended, nothing", CombatEndedEvent(CombatResult{CombatID: "cb2", Outcome: OutcomePlayerDie, Loot: []string{}, Defeated: []string{}}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"combat_ended","data":{"combat_id":"cb2","outcome":"player_die","rewards":{"gold":0,"loot":[],"xp":0}}}`},
		{"combat started", CombatStartedEvent(cb),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"combat_started","data":{"combat_id":"cb1","initiative":[{"id":"dm","kind":"bookend","name":"DM"},{"id":"pc:1","initiative":85,"kind":"pc","name":"Brunhild"},{"id":"dm:snikket","initiative":0,"kind":"npc","name":"Snikket"}],"location":"mill"}}`},
		{"ability", AbilityEvent("Sel", "magic_missile", "Snikket", 1),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"ability","data":{"ability":"magic_missile","actor":"Sel","target":"Snikket","uses_left":1}}`},
		{"ability, no target", AbilityEvent("Odo", "shield_wall", "", 0),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"ability","data":{"ability":"shield_wall","actor":"Odo","uses_left":0}}`},
		{"combatant joined", CombatantJoinedEvent(Combatant{Entry: "dm:wolf", Kind: KindNPC, Ref: "wolf", Name: "Wolf", Initiative: 41}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"combatant_joined","data":{"entry":"dm:wolf","initiative":41,"name":"Wolf"}}`},
		{"narration", NarrationEvent(AgentNarrative, `Rain <falls> & "drips".`, nil, ""),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"narration","data":{"agent":"narrative","text":"Rain \u003cfalls\u003e \u0026 \"drips\"."}}`},
		{"narration with hints", NarrationEvent(AgentCombat, "Snikket snarls.", []string{"attack", "flee"}, ""),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"narration","data":{"agent":"combat","hints":["attack","flee"],"text":"Snikket snarls."}}`},
		{"system", SystemEvent("turn_timeout", "Vesna did not act within 30s and takes a defensive stance."),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"system","data":{"code":"turn_timeout","message":"Vesna did not act within 30s and takes a defensive stance."}}`},
		{"system, a failed action", NewEvent(SystemData{Code: "unavailable", Message: "The DM could not resolve the turn.", ActionID: "a-1", Attempts: 2}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"system","data":{"action_id":"a-1","attempts":2,"code":"unavailable","message":"The DM could not resolve the turn."}}`},
		{"system, abandoned", NewEvent(SystemData{Code: "abandoned", Message: "Dropped.", ActionID: "a-1", PlayerID: "p1"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"system","data":{"action_id":"a-1","code":"abandoned","message":"Dropped.","player_id":"p1"}}`},
		{"system, audit", NewEvent(SystemData{Code: "moderation", Message: "Abandoned.", Action: "abandon", ActionID: "a-1"}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"system","data":{"action":"abandon","action_id":"a-1","code":"moderation","message":"Abandoned."}}`},
		{"system, fight aborted", NewEvent(SystemData{Code: "unavailable", Message: "It ends here.", Outcome: OutcomeErrorAbort}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"system","data":{"code":"unavailable","message":"It ends here.","outcome":"error_abort"}}`},
		{"narration of an action", NarrationEvent(AgentNarrative, "You look.", []string{"go north"}, "a-1"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"narration","data":{"action_id":"a-1","agent":"narrative","hints":["go north"],"text":"You look."}}`},
		{"equipped", EquippedEvent("c1", &Item{ID: "i9", Name: "Axe"}, "weapon"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"world","data":{"equipped":{"character_id":"c1","item":"Axe","item_id":"i9","slot":"weapon"}}}`},
		{"combat ended, shares", CombatEndedEvent(CombatResult{CombatID: "cb3", Outcome: OutcomePlayerWin, XP: 40, Gold: 6, Loot: []string{}, LevelUps: []string{"Brunhild"},
			Shares: []RewardShare{{Name: "Brunhild", XP: 40, Gold: 6}}, Missed: []string{"Vesna"}}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"combat_ended","data":{"combat_id":"cb3","outcome":"player_win","rewards":{"gold":6,"level_ups":["Brunhild"],"loot":[],"missed":["Vesna"],"shares":[{"name":"Brunhild","xp":40,"gold":6}],"xp":40}}}`},
		{"turn with a deadline", DeadlineTurnEvent(TurnData{Round: 1, Index: 1, Entry: InitiativeEntry{ID: "pc:1", Name: "Brunhild", Kind: KindPC}}, "2026-01-01T12:00:30Z"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"turn","data":{"deadline":"2026-01-01T12:00:30Z","entry":{"id":"pc:1","name":"Brunhild","kind":"pc"},"index":1,"round":1}}`},
		{"player joined", PlayerJoinedEvent(ann, "1", "player", brunhild),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"player_joined","data":{"character":"Brunhild","character_id":"c1","name":"Ann","player_id":"p1","role":"player","seat":"1"}}`},
		{"player left", PlayerLeftEvent(ann, "1", "player"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"player_left","data":{"name":"Ann","player_id":"p1","role":"player","seat":"1"}}`},
		{"action", ActionEvent(PendingAction{ID: "a-1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "x", Text: "I go north", Status: ActionPending}, "Brunhild"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"action","data":{"action_id":"a-1","character_id":"c1","name":"Brunhild","player_id":"p1","text":"I go north"}}`},
		{"chat", ChatEvent(ann, "brb"),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"chat","data":{"name":"Ann","player_id":"p1","text":"brb"}}`},
		{"turn", TurnEvent(2, 1, InitiativeEntry{ID: "pc:1", Name: "Brunhild", Kind: KindPC, Initiative: ip(85), HP: ip(30), MaxHP: ip(45), Statuses: []string{"off-balance"}}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"turn","data":{"entry":{"id":"pc:1","name":"Brunhild","kind":"pc","initiative":85,"hp":30,"max_hp":45,"statuses":["off-balance"]},"index":1,"round":2}}`},
		{"turn, npc", TurnEvent(1, 2, InitiativeEntry{ID: "dm:snikket", Name: "Snikket", Kind: KindNPC, Initiative: ip(0), HP: ip(0), MaxHP: ip(18)}),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"turn","data":{"entry":{"id":"dm:snikket","name":"Snikket","kind":"npc","initiative":0,"hp":0,"max_hp":18},"index":2,"round":1}}`},
		{"turn, resolution", ResolutionTurnEvent(3, 0, OutcomePlayerWin),
			`{"seq":0,"ts":"0001-01-01T00:00:00Z","kind":"turn","data":{"entry":{"id":"dm","name":"DM","kind":"bookend"},"index":0,"resolution":"player_win","round":3}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("JSON\n got %s\nwant %s", b, tc.want)
			}
			// One representation: the event read back from its JSON (the
			// store, the wire) holds the payload it was built with.
			var back Event
			if err := json.Unmarshal([]byte(tc.want), &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.ev) {
				t.Errorf("decoded\n got %#v\nwant %#v", back.Data, tc.ev.Data)
			}
		})
	}
}

// TestDecodeData keeps the data of kinds it does not know as it came, and
// refuses data that does not fit its kind's payload.
func TestDecodeData(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		data string
		want Payload
	}{
		{"table", `{"name":"x"}`, RawData(`{"name":"x"}`)},
		{EventNarration, `null`, RawData(nil)},
		{EventWorld, `{"weather":"rain"}`, RawData(`{"weather":"rain"}`)},
		{EventChat, `{"name":"Ann","text":"hi","extra":1}`, ChatData{Name: "Ann", Text: "hi"}},
	} {
		got, err := DecodeData(tc.kind, []byte(tc.data))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: %#v, %v; want %#v", tc.kind, tc.data, got, err, tc.want)
		}
	}
	if _, err := DecodeData(EventTurn, []byte(`{"round":"two"}`)); err == nil {
		t.Error("a turn whose round is a string decoded")
	}
	if _, err := DecodeData(EventWorld, []byte(`[1]`)); err == nil {
		t.Error("a world event whose data is an array decoded")
	}
}
