package engine

// The table owner's settings (PROTOCOL.md "Table owners").

// How players and spectators see an NPC's health (Config.NPCHP).
const (
	// NPCHPExact shows an NPC's hit points as numbers (the default; ""
	// reads as it).
	NPCHPExact = "exact"
	// NPCHPWords shows them as a word (HealthWord) and never as numbers.
	NPCHPWords = "words"
)

// Health words, from whole to down (HealthWord).
const (
	HealthUnhurt    = "unhurt"
	HealthWounded   = "wounded"
	HealthBloodied  = "bloodied"
	HealthNearDeath = "near death"
	HealthDown      = "down"
)

// HealthWord says hp out of maxHP in a word: unhurt at full health,
// bloodied at half or less, near death at a quarter or less, down at 0,
// wounded between.
func HealthWord(hp, maxHP int) string {
	switch {
	case hp <= 0:
		return HealthDown
	case hp >= maxHP:
		return HealthUnhurt
	case hp*4 <= maxHP:
		return HealthNearDeath
	case hp*2 <= maxHP:
		return HealthBloodied
	}
	return HealthWounded
}

// Words reports whether c hides NPC numbers from players.
func (c Config) Words() bool { return c.NPCHP == NPCHPWords }

// checkNPCHP returns v, or NPCHPExact for "", or an EINVALID error.
func checkNPCHP(v string) (string, error) {
	switch v {
	case "":
		return NPCHPExact, nil
	case NPCHPExact, NPCHPWords:
		return v, nil
	}
	return "", Errorf(EINVALID, `npc_hp must be "exact" or "words".`)
}

// SettingsPatch is what a table's owner may change (PATCH
// /api/tables/{id}); a nil field is left as it is.
type SettingsPatch struct {
	Name         *string
	Private      *bool
	NPCHP        *string
	TurnTimeoutS *int
}

// Validate checks p and returns it cleaned (the name trimmed). Errors are
// EINVALID *Errors naming the field; an empty patch is one.
func (p SettingsPatch) Validate() (SettingsPatch, error) {
	if p.Name == nil && p.Private == nil && p.NPCHP == nil && p.TurnTimeoutS == nil {
		return p, Errorf(EINVALID, `Nothing to change; send any of "name", "private", "npc_hp", "turn_timeout_s".`)
	}
	if p.Name != nil {
		name, err := CleanName("name", *p.Name, MaxTableNameLen)
		if err != nil {
			return p, err
		}
		p.Name = &name
	}
	if p.NPCHP != nil {
		if *p.NPCHP == "" {
			return p, Errorf(EINVALID, `npc_hp must be "exact" or "words".`)
		}
		v, err := checkNPCHP(*p.NPCHP)
		if err != nil {
			return p, err
		}
		p.NPCHP = &v
	}
	if p.TurnTimeoutS != nil {
		if v := *p.TurnTimeoutS; v < 0 || v > MaxTurnTimeoutS {
			return p, Errorf(EINVALID, "turn_timeout_s must be between 0 and %d.", MaxTurnTimeoutS)
		}
	}
	return p, nil
}

// NPCDamageData and NPCHealData are the payloads of `damage` and `heal`
// for an NPC as players see it at a table in words mode: its health in a
// word (HealthWord) in place of its hit points.
type NPCDamageData struct {
	Amount int    `json:"amount"`
	Health string `json:"health"`
	Target string `json:"target"`
}

// NPCHealData is NPCDamageData for `heal`.
type NPCHealData NPCDamageData

func (NPCDamageData) EventKind() Kind { return EventDamage }
func (NPCHealData) EventKind() Kind   { return EventHeal }

// PlayerRemovedEvent is p's seat freed by someone else: by is "owner" or
// "operator" (PROTOCOL.md "Table owners").
func PlayerRemovedEvent(p Player, seat, role, by string) Event {
	return NewEvent(PlayerLeftData{PlayerID: p.ID, Name: p.Name, Seat: seat, Role: role, By: by})
}
