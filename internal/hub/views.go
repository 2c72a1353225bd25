package hub

import (
	"slices"
	"sort"

	"tavern/internal/engine"
)

// TableSummary is PROTOCOL.md's TableSummary.
type TableSummary struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Adventure  string `json:"adventure"`
	Ruleset    string `json:"ruleset"`
	CombatMode string `json:"combat_mode"`
	Mode       string `json:"mode"`
	Seats      int    `json:"seats"`
	Seated     int    `json:"seated"`
	Spectators int    `json:"spectators"`
	Status     string `json:"status"`
	// Additive: the table's turn timer and the adventure's display name.
	TurnTimeoutS  int    `json:"turn_timeout_s"`
	AdventureName string `json:"adventure_name"`
	// The owner's side (PROTOCOL.md "Table owners"): who owns the table,
	// whether strangers may find it, and how NPC health is shown.
	OwnerID string `json:"owner_id"`
	Private bool   `json:"private"`
	NPCHP   string `json:"npc_hp"`
}

// Ref names a catalogue or world item.
type Ref struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ItemView is one inventory entry.
type ItemView struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Template string   `json:"template"`
	Buffs    []string `json:"buffs,omitempty"`
	Flaws    []string `json:"flaws,omitempty"`
	// Additive: the template's category (weapon, armour, consumable…), so
	// the page offers equip only for what can be equipped, use for what
	// can be used; Equipped when the character wields it.
	Category string `json:"category,omitempty"`
	Equipped bool   `json:"equipped,omitempty"`
}

// Character is PROTOCOL.md's Character.
type Character struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Class     string         `json:"class"`
	Level     int            `json:"level"`
	XP        int            `json:"xp"`
	HP        int            `json:"hp"`
	MaxHP     int            `json:"max_hp"`
	Gold      int            `json:"gold"`
	Stats     engine.Stats   `json:"stats"`
	Equipped  map[string]Ref `json:"equipped"`
	Inventory []ItemView     `json:"inventory"`
	Statuses  []string       `json:"statuses"`
	Seat      string         `json:"seat"`
	PlayerID  string         `json:"player_id"`
	// Player is additive: the seated player's display name.
	Player string `json:"player,omitempty"`
	// Additive: the armour class (d20) or armour absorption (d100) the
	// sheet shows as defence, and the total XP the next level needs.
	AC         int `json:"ac,omitempty"`
	Absorption int `json:"absorption,omitempty"`
	XPNext     int `json:"xp_next"`
	// CanAct and Turn are additive: whether the character may send an act
	// now, and why (turnOf). They are decided here once for every viewer,
	// so clients obey them instead of re-deriving the rules.
	CanAct bool   `json:"can_act"`
	Turn   string `json:"turn"`
	// Abilities are the class's abilities with the uses left
	// (PROTOCOL.md "Abilities").
	Abilities []engine.Ability `json:"abilities"`
}

// Character.Turn values: where a character stands for acting now.
const (
	// TurnFree: no turn order holds (exploring, or a free fight); may act.
	TurnFree = "free"
	// TurnYours: a turn-based fight, and it is this character's turn; may act.
	TurnYours = "yours"
	// TurnWaiting: a turn-based fight, and another combatant's turn (or the
	// fight is ending); may not act.
	TurnWaiting = "waiting"
	// TurnDown: unconscious or dead; may not act.
	TurnDown = "down"
)

// turnOf says where c stands for acting now, by the rules an act must pass
// (PROTOCOL.md "act": in tactical combat only on your turn; a character
// who is down cannot act). A running DM turn (Snapshot.Busy) is told
// apart: it delays acts but refuses none.
func turnOf(st *engine.State, c *engine.Character) string {
	if !c.Conscious() {
		return TurnDown
	}
	cb := st.Game.Combat
	if cb == nil || st.Config.CombatMode != engine.CombatTactical {
		return TurnFree
	}
	if cb.Ending == "" && cb.Current().Entry == engine.PCEntry(c.Seat) {
		return TurnYours
	}
	return TurnWaiting
}

// onlineSeats lists the seats whose player has a live player connection
// among clients, sorted (the snapshot's additive `online`).
func onlineSeats(clients map[*client]struct{}) []string {
	out := []string{}
	for c := range clients {
		if c.role == rolePlayer && c.seat != "" && !slices.Contains(out, c.seat) {
			out = append(out, c.seat)
		}
	}
	sort.Strings(out)
	return out
}

// Location is PROTOCOL.md's Location (where the party is).
type Location struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Exits       []engine.Exit `json:"exits"`
	// Items is additive: what lies on the ground here.
	Items []ItemView `json:"items"`
}

// NPC is PROTOCOL.md's NPC. Secrets never appear here.
type NPC struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	Location    string   `json:"location"`
	Hostile     bool     `json:"hostile"`
	Behavior    string   `json:"behavior"`
	Disposition int      `json:"disposition"`
	HP          *int     `json:"hp,omitempty"`
	MaxHP       *int     `json:"max_hp,omitempty"`
	Statuses    []string `json:"statuses,omitempty"`
	// Health replaces HP and MaxHP in words mode (engine.HealthWord).
	Health string `json:"health,omitempty"`
}

// CombatView is the snapshot's combat object.
type CombatView struct {
	CombatID   string                   `json:"combat_id"`
	Round      int                      `json:"round"`
	Index      int                      `json:"index"`
	Initiative []engine.InitiativeEntry `json:"initiative"`
	// Deadline is additive: when the waiting PC's turn timer runs out.
	Deadline string `json:"deadline,omitempty"`
}

// Snapshot is PROTOCOL.md's Snapshot: what a spectator may see.
type Snapshot struct {
	Table    TableSummary   `json:"table"`
	Seq      int64          `json:"seq"`
	Mode     string         `json:"mode"`
	Location Location       `json:"location"`
	Party    []Character    `json:"party"`
	NPCs     []NPC          `json:"npcs"`
	Combat   *CombatView    `json:"combat"`
	Recent   []engine.Event `json:"recent"`
	// Additive fields.
	DM          string               `json:"dm"`    // which game master runs: "offline" or the model name
	Busy        bool                 `json:"busy"`  // a DM turn is running
	Queue       []engine.EntryID     `json:"queue"` // exploration order
	LastCombat  *engine.CombatResult `json:"last_combat_result,omitempty"`
	AdventureID string               `json:"adventure_id"`
	Quests      []QuestView          `json:"quests"`
	// Followers are the NPCs travelling with the party.
	Followers []string `json:"followers"`
	// Pending are the open actions with where each is in its life
	// (admin.go); Paused is set while the operator has paused the table.
	Pending []PendingView `json:"pending,omitempty"`
	Paused  bool          `json:"paused,omitempty"`
	// Online lists the seats whose player is connected right now.
	Online []string `json:"online"`
	// Notes are the table's notes, oldest first (notes.go).
	Notes []NoteView `json:"notes,omitempty"`
	// Shops are those kept at the party's location: stock with prices,
	// and what each pays back (PROTOCOL.md "Adventures").
	Shops []engine.ShopView `json:"shops,omitempty"`
	// Undoable is how many DM turns a retcon could undo now (0 to
	// store.MaxSavePoints), so the owner's page offers undo only when
	// the server would do it.
	Undoable int `json:"undoable"`
	// CannotSave says, while a turn waits for the store to write again,
	// why nothing moves; empty otherwise.
	CannotSave string `json:"cannot_save,omitempty"`
}

// QuestView is a quest as the players see it (additive to PROTOCOL.md).
type QuestView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Giver        string `json:"giver"`
	GiverName    string `json:"giver_name"`
	Status       string `json:"status"`
	RewardXP     int    `json:"reward_xp"`
	RewardGold   int    `json:"reward_gold"`
	Requires     string `json:"requires,omitempty"`
	RequiresName string `json:"requires_name,omitempty"`
}

// questViews lists the quests, sorted by id.
func questViews(st *engine.State) []QuestView {
	out := make([]QuestView, 0, len(st.World.Quests))
	for _, q := range st.World.Quests {
		v := QuestView{ID: q.ID, Name: q.Name, Description: q.Description, Giver: q.Giver, Status: q.Status,
			RewardXP: q.RewardXP, RewardGold: q.RewardGold, Requires: q.Requires}
		if n := st.World.NPCs[q.Giver]; n != nil {
			v.GiverName = n.Name
		}
		if q.Requires != "" {
			v.RequiresName = st.ItemName(q.Requires)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func followers(st *engine.State) []string {
	out := []string{}
	for _, n := range st.World.NPCsAt(st.Game.Location) {
		if n.Behavior == "following" {
			out = append(out, n.Name)
		}
	}
	return out
}

func intp(v int) *int { return &v }

func characterView(st *engine.State, c *engine.Character, names map[string]string) Character {
	cat := st.Catalogue
	v := Character{
		ID: c.ID, Name: c.Name, Class: c.Class, Level: c.Level, XP: c.XP, HP: c.HP, MaxHP: c.MaxHP,
		Gold: c.Gold, Stats: c.Stats, Statuses: nonNil(c.Statuses), Seat: c.Seat, PlayerID: c.PlayerID,
		Equipped:  map[string]Ref{"weapon": {ID: c.Weapon, Name: cat.Weapon(c.Weapon).Name}, "armour": {ID: c.Armour, Name: cat.Armour(c.Armour).Name}},
		Inventory: itemViews(st, st.Inventory(c.ID)),
		Player:    names[c.PlayerID],
		XPNext:    engine.XPForLevel(c.Level + 1),
		Turn:      turnOf(st, c),
		Abilities: st.CharacterAbilities(c),
	}
	v.CanAct = v.Turn == TurnFree || v.Turn == TurnYours
	for _, slot := range []string{"weapon", "armour"} {
		if it := st.WieldedItem(c, slot); it != nil {
			v.Equipped[slot] = Ref{ID: v.Equipped[slot].ID, Name: it.Name}
		}
	}
	ar := cat.Armour(c.Armour)
	if st.Config.Ruleset == engine.RulesetD20 {
		v.AC = engine.D20{}.AC(engine.Fighter{Armour: ar})
	} else {
		v.Absorption = ar.Absorption
	}
	return v
}

func itemViews(st *engine.State, items []*engine.Item) []ItemView {
	out := make([]ItemView, 0, len(items))
	for _, it := range items {
		v := ItemView{ID: it.ID, Name: it.Name, Template: it.Template, Buffs: it.Buffs, Flaws: it.Flaws}
		if st.Catalogue != nil {
			v.Category = st.Catalogue.Category(it.Template)
		}
		if it.OwnerType == engine.OwnerCharacter {
			if c := st.Character(it.OwnerID); c != nil {
				for _, slot := range []string{"weapon", "armour"} {
					if w := st.WieldedItem(c, slot); w != nil && w.ID == it.ID {
						v.Equipped = true
					}
				}
			}
		}
		out = append(out, v)
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func initiativeView(st *engine.State) *CombatView {
	cb := st.Game.Combat
	if cb == nil {
		return nil
	}
	v := &CombatView{CombatID: cb.ID, Round: cb.Round, Index: cb.Index, Initiative: make([]engine.InitiativeEntry, 0, len(cb.Order))}
	for _, e := range cb.Order {
		v.Initiative = append(v.Initiative, entryView(st, e))
	}
	return v
}

func entryView(st *engine.State, e engine.Combatant) engine.InitiativeEntry {
	iv := engine.InitiativeEntry{ID: e.Entry, Name: e.Name, Kind: e.Kind}
	switch e.Kind {
	case engine.KindNPC:
		iv.Initiative = intp(e.Initiative)
		if n := st.World.NPCs[e.Ref]; n != nil {
			iv.HP, iv.MaxHP, iv.Statuses = intp(n.HP), intp(n.MaxHP), nonNil(n.Statuses)
		}
	case engine.KindPC:
		iv.Initiative = intp(e.Initiative)
		if c := st.Character(e.Ref); c != nil {
			iv.HP, iv.MaxHP, iv.Statuses = intp(c.HP), intp(c.MaxHP), nonNil(c.Statuses)
		}
	}
	return iv
}

func npcViews(st *engine.State) []NPC {
	out := []NPC{}
	inFight := map[string]bool{}
	if cb := st.Game.Combat; cb != nil {
		for _, e := range cb.Order {
			inFight[e.Ref] = true
		}
	}
	for _, n := range st.World.NPCsAt(st.Game.Location) {
		// A dead foe is no threat: it is not listed as hostile.
		v := NPC{ID: n.ID, Name: n.Name, Kind: n.Kind, Location: n.Location, Hostile: n.Hostile && n.Alive(),
			Behavior: n.Behavior, Disposition: n.Disposition, Statuses: n.Statuses}
		// HP is shown once it matters: in a fight, or when hurt.
		if inFight[n.ID] || n.HP < n.MaxHP {
			v.HP, v.MaxHP = intp(n.HP), intp(n.MaxHP)
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func locationView(st *engine.State) Location {
	l := st.World.Locations[st.Game.Location]
	if l == nil {
		return Location{ID: st.Game.Location, Exits: []engine.Exit{}, Items: []ItemView{}}
	}
	exits := make([]engine.Exit, len(l.Exits))
	for i, e := range l.Exits {
		exits[i] = e.Public() // keys and traps are the DM's to know
	}
	return Location{ID: l.ID, Name: l.Name, Description: l.Description, Exits: exits,
		Items: itemViews(st, st.World.ItemsOwned(engine.OwnerLocation, l.ID))}
}
