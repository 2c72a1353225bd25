package engine

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// World operations for the narrative agent's tools (seed 001). Each checks
// its arguments against the world and returns an actionable *Error; the
// tools add the per-turn limits and the "acting player" rule.

// Limits on what the DM may hand out or create in one call.
const (
	MaxGoldChange   = 50  // gold gained or lost per call
	MaxXPGrant      = 50  // XP granted per call (quests and fights pay their own)
	MaxQuestXP      = 300 // a created quest's XP reward
	MaxQuestGold    = 150 // a created quest's gold reward
	MaxDisposition  = 20  // disposition change per call
	MaxRelationship = 30  // relationship change per call
	MaxTraits       = 3   // buffs or flaws on one item
)

// Behaviours an NPC may be in.
var Behaviors = []string{"friendly", "neutral", "wary", "defensive", "cold", "hostile", "aggressive", "following", "fleeing"}

// Relationship returns how a feels about b, -100..100. With no stored
// value, an NPC's disposition stands for its attitude to anyone.
func (s *State) Relationship(a, b string) int {
	if v, ok := s.World.Relationships[RelKey(a, b)]; ok {
		return v
	}
	for _, id := range []string{a, b} {
		if n, ok := s.World.NPCs[id]; ok {
			return n.Disposition
		}
	}
	return 0
}

// entityName resolves a character or NPC id to its name, or "".
func (s *State) entityName(id string) string {
	if c := s.Character(id); c != nil {
		return c.Name
	}
	if n, ok := s.World.NPCs[id]; ok {
		return n.Name
	}
	return ""
}

// ResolveBeing finds a PC or an NPC by id or name (preferring those at the
// party's location) and returns its id and name.
func (s *State) ResolveBeing(ref string) (id, name string, ok bool) {
	if c := s.FindCharacter(ref); c != nil {
		return c.ID, c.Name, true
	}
	if n := s.World.FindNPC(ref, s.Game.Location); n != nil {
		return n.ID, n.Name, true
	}
	return "", "", false
}

// AdjustRelationship changes how a and b feel about each other by delta
// (at most ±30 a call), clamped to -100..100.
func (s *State) AdjustRelationship(a, b string, delta int) (int, []Event, error) {
	ida, na, ok := s.ResolveBeing(a)
	if !ok {
		return 0, nil, Errorf(ENOTFOUND, "No character or NPC %q.", a)
	}
	idb, nb, ok := s.ResolveBeing(b)
	if !ok {
		return 0, nil, Errorf(ENOTFOUND, "No character or NPC %q.", b)
	}
	if ida == idb {
		return 0, nil, Errorf(EINVALID, "A relationship needs two different beings.")
	}
	if delta < -MaxRelationship || delta > MaxRelationship {
		return 0, nil, Errorf(EINVALID, "A relationship changes by at most %d at a time.", MaxRelationship)
	}
	v := max(-100, min(100, s.Relationship(ida, idb)+delta))
	s.World.Relationships[RelKey(ida, idb)] = v
	return v, []Event{RelationshipEvent(na, nb, v)}, nil
}

func (s *State) needNPC(ref string) (*NPC, error) {
	n := s.World.FindNPC(ref, s.Game.Location)
	if n == nil {
		return nil, Errorf(ENOTFOUND, "No NPC %q; NPCs here: %s.", ref, s.npcNames(s.Game.Location))
	}
	return n, nil
}

func (s *State) needCharacter(ref string) (*Character, error) {
	c := s.FindCharacter(ref)
	if c == nil {
		var names []string
		for _, p := range s.Party {
			names = append(names, p.Name)
		}
		return nil, Errorf(ENOTFOUND, "No party member %q; the party: %s.", ref, strings.Join(names, ", "))
	}
	return c, nil
}

// AdjustGold adds amount (at most ±50 a call) to a character's gold; a
// character cannot pay more than it has.
func (s *State) AdjustGold(charID string, amount int) (int, error) {
	c := s.Character(charID)
	if c == nil {
		return 0, Errorf(ENOTFOUND, "Unknown character.")
	}
	if amount < -MaxGoldChange || amount > MaxGoldChange {
		return 0, Errorf(EINVALID, "Gold changes by at most %d at a time; trade with buy_item, and quests pay their own rewards.", MaxGoldChange)
	}
	if c.Gold+amount < 0 {
		return 0, Errorf(EINVALID, "%s has only %d gold.", c.Name, c.Gold)
	}
	c.Gold += amount
	return c.Gold, nil
}

// HealthChange rolls dice of damage or healing outside a fight (a fall, a
// night's rest, a poultice). dice is at most 4d12+10.
func (s *State) HealthChange(d *Dice, ref, dice, kind, reason string) (hp, maxHP int, evs []Event, err error) {
	if err := healCap.check(dice, "Health"); err != nil {
		return 0, 0, nil, err
	}
	if kind != "damage" && kind != "heal" {
		return 0, 0, nil, Errorf(EINVALID, "kind must be damage or heal.")
	}
	var hpp *int
	var name string
	var statuses *[]string
	isPC := false
	if c := s.FindCharacter(ref); c != nil {
		hpp, maxHP, name, statuses, isPC = &c.HP, c.MaxHP, c.Name, &c.Statuses, true
	} else if n := s.World.FindNPC(ref, s.Game.Location); n != nil {
		if !n.Alive() {
			return 0, 0, nil, Errorf(EINVALID, "%s is dead.", n.Name)
		}
		hpp, maxHP, name, statuses = &n.HP, n.MaxHP, n.Name, &n.Statuses
	} else {
		return 0, 0, nil, Errorf(ENOTFOUND, "No character or NPC %q.", ref)
	}
	if reason == "" {
		reason = kind
	}
	r, err := d.RollNotation("DM", reason+" ("+name+")", dice)
	if err != nil {
		return 0, 0, nil, err
	}
	evs = diceEvents(d)
	if kind == "heal" {
		*hpp = min(maxHP, *hpp+max(0, r.Total))
		if *hpp > 0 {
			*statuses = RemoveStatus(*statuses, StatusUnconscious)
		}
		evs = append(evs, HealEvent(name, r.Total, *hpp, maxHP))
		return *hpp, maxHP, evs, nil
	}
	*hpp = max(0, *hpp-max(0, r.Total))
	evs = append(evs, DamageEvent(name, r.Total, *hpp, maxHP))
	if *hpp == 0 {
		down := StatusDead
		if isPC {
			down = StatusUnconscious
		}
		*statuses = AddStatus(*statuses, down)
		evs = append(evs, StatusAddedEvent(name, down))
	}
	return *hpp, maxHP, evs, nil
}

// MoveNPC moves an NPC to the party's location or to a place next to where
// it is.
func (s *State) MoveNPC(ref, to string) (*NPC, []Event, error) {
	n, err := s.needNPC(ref)
	if err != nil {
		return nil, nil, err
	}
	if !n.Alive() {
		return nil, nil, Errorf(EINVALID, "%s is dead.", n.Name)
	}
	l := s.FindLocation(to)
	if l == nil {
		return nil, nil, Errorf(ENOTFOUND, "No location %q.", to)
	}
	near := l.ID == s.Game.Location || l.ID == n.Location
	if here := s.World.Locations[n.Location]; here != nil {
		for _, e := range here.Exits {
			near = near || e.To == l.ID
		}
	}
	if !near {
		return nil, nil, Errorf(EINVALID, "%s cannot get to %s from %s in one move.", n.Name, l.Name, n.Location)
	}
	n.Location = l.ID
	return n, []Event{NPCMovedEvent(n.Name, l)}, nil
}

// SetBehavior sets an NPC's behaviour; hostile and aggressive NPCs fight.
func (s *State) SetBehavior(ref, behavior string) (*NPC, error) {
	n, err := s.needNPC(ref)
	if err != nil {
		return nil, err
	}
	behavior = strings.ToLower(strings.TrimSpace(behavior))
	if !slices.Contains(Behaviors, behavior) {
		return nil, Errorf(EINVALID, "Unknown behaviour %q; behaviours: %s.", behavior, strings.Join(Behaviors, ", "))
	}
	n.Behavior = behavior
	n.Hostile = behavior == "hostile" || behavior == "aggressive"
	return n, nil
}

// AdjustDisposition changes an NPC's general attitude by delta (at most ±20
// a call), clamped to -100..100.
func (s *State) AdjustDisposition(ref string, delta int) (*NPC, error) {
	n, err := s.needNPC(ref)
	if err != nil {
		return nil, err
	}
	if delta < -MaxDisposition || delta > MaxDisposition {
		return nil, Errorf(EINVALID, "Disposition changes by at most %d at a time.", MaxDisposition)
	}
	n.Disposition = max(-100, min(100, n.Disposition+delta))
	return n, nil
}

// CreateQuest records a quest offered by an NPC, with rewards within limits.
func (s *State) CreateQuest(id, giver, name, description string, xp, gold int, requires string) (*Quest, []Event, error) {
	n, err := s.needNPC(giver)
	if err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(name) == "" || len([]rune(name)) > 80 {
		return nil, nil, Errorf(EINVALID, "A quest needs a name of 1 to 80 characters.")
	}
	if xp < 0 || xp > MaxQuestXP || gold < 0 || gold > MaxQuestGold {
		return nil, nil, Errorf(EINVALID, "Quest rewards are 0-%d XP and 0-%d gold.", MaxQuestXP, MaxQuestGold)
	}
	if requires != "" && !s.templateExists(requires) {
		return nil, nil, Errorf(ENOTFOUND, "No item template %q for the quest to require.", requires)
	}
	q := &Quest{ID: id, Name: name, Description: description, Giver: n.ID, Status: QuestOffered, RewardXP: xp, RewardGold: gold, Requires: requires}
	s.World.Quests[id] = q
	return q, []Event{QuestEvent(q)}, nil
}

// QuestResult is what changing a quest's status did.
type QuestResult struct {
	Quest    *Quest   `json:"quest"`
	XP       int      `json:"xp,omitempty"`
	Gold     int      `json:"gold,omitempty"`
	LevelUps []string `json:"level_ups,omitempty"`
}

// FindQuest resolves a quest by id or name.
func (s *State) FindQuest(ref string) *Quest {
	return byIDOrName(s.World.Quests, ref, func(q *Quest) string { return q.Name })
}

// SetQuestStatus moves a quest along: offered → active (accepted),
// offered/active → completed or failed. Completing needs the required item
// in the giver's hands; the engine then pays the rewards: each party
// member gains the XP, and the gold is shared.
func (s *State) SetQuestStatus(ref, status string) (QuestResult, []Event, error) {
	q := s.FindQuest(ref)
	if q == nil {
		var names []string
		for _, q := range s.World.Quests {
			names = append(names, fmt.Sprintf("%s (%s, %s)", q.Name, q.ID, q.Status))
		}
		sort.Strings(names)
		return QuestResult{}, nil, Errorf(ENOTFOUND, "No quest %q; quests: %s.", ref, strings.Join(names, ", "))
	}
	if q.Status == QuestCompleted || q.Status == QuestFailed {
		return QuestResult{}, nil, Errorf(EINVALID, "%s is already %s.", q.Name, q.Status)
	}
	switch status {
	case QuestActive:
		if q.Status != QuestOffered {
			return QuestResult{}, nil, Errorf(EINVALID, "%s is already %s.", q.Name, q.Status)
		}
	case QuestFailed:
	case QuestCompleted:
		if q.Requires != "" {
			held := false
			for _, it := range s.World.ItemsOwned(OwnerNPC, q.Giver) {
				held = held || it.Template == q.Requires
			}
			if !held {
				return QuestResult{}, nil, Errorf(EINVALID, "%s is not done: %s must first be given to %s.", q.Name, s.ItemName(q.Requires), s.entityName(q.Giver))
			}
		}
	default:
		return QuestResult{}, nil, Errorf(EINVALID, "status must be active, completed or failed.")
	}
	q.Status = status
	res := QuestResult{Quest: q}
	evs := []Event{QuestEvent(q)}
	if status == QuestCompleted && len(s.Party) > 0 {
		res.XP, res.Gold = q.RewardXP, q.RewardGold
		each := q.RewardGold / len(s.Party)
		for i, c := range s.Party {
			g := each
			if i == 0 {
				g += q.RewardGold - each*len(s.Party)
			}
			c.Gold += g
			if s.GainXP(c, q.RewardXP) {
				res.LevelUps = append(res.LevelUps, fmt.Sprintf("%s reaches level %d", c.Name, c.Level))
			}
		}
	}
	return res, evs, nil
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes an id from a name, unique among existing keys.
func Slug(name string, taken func(string) bool) string {
	base := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if base == "" {
		base = "x"
	}
	if len(base) > 40 {
		base = base[:40]
	}
	id := base
	for i := 2; taken(id); i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	return id
}

// CreateLocation adds a place reachable from the party's location (and
// back).
func (s *State) CreateLocation(name, description, exitName string) (*Location, []Event, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 60 || len(description) > 600 {
		return nil, nil, Errorf(EINVALID, "A location needs a name (1-60 characters) and a description of at most 600.")
	}
	if l := s.FindLocation(name); l != nil {
		return nil, nil, Errorf(ECONFLICT, "%s already exists (%s).", l.Name, l.ID)
	}
	here := s.World.Locations[s.Game.Location]
	id := Slug(name, func(id string) bool { _, ok := s.World.Locations[id]; return ok })
	if exitName == "" {
		exitName = "the way to " + name
	}
	l := &Location{ID: id, Name: name, Description: description, Exits: []Exit{{To: here.ID, Name: "back to " + here.Name}}}
	s.World.Locations[id] = l
	here.Exits = append(here.Exits, Exit{To: id, Name: exitName})
	return l, []Event{LocationCreatedEvent(l)}, nil
}

// CreateTemplate defines a new kind of item for this table's world.
func (s *State) CreateTemplate(name, category, description string, value int) (*ItemTemplate, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 60 {
		return nil, Errorf(EINVALID, "A template needs a name of 1 to 60 characters.")
	}
	if value < 0 || value > 100 {
		return nil, Errorf(EINVALID, "A new template is worth 0 to 100 gold.")
	}
	for _, t := range s.World.Templates {
		if equalFoldTrim(t.Name, name) {
			return nil, Errorf(ECONFLICT, "Template %s already exists (%s): use it.", t.Name, t.ID)
		}
	}
	id := Slug(name, s.templateExists)
	t := &ItemTemplate{ID: id, Name: name, Category: category, Description: description, Value: value}
	s.World.Templates[id] = t
	return t, nil
}

// SkillCheck rolls a check of a character's stat against a difficulty: d100
// rolls 1d100 + 5×mod against a difficulty of 1-100; d20 rolls 1d20 + mod
// against a DC of 1-30.
func (s *State) SkillCheck(d *Dice, charID, stat string, difficulty int) (bool, Roll, error) {
	c := s.Character(charID)
	if c == nil {
		return false, Roll{}, Errorf(ENOTFOUND, "Unknown character.")
	}
	v, ok := c.Stats.Of(Stat(stat))
	if !ok {
		return false, Roll{}, Errorf(EINVALID, "stat must be one of str, agi, con, int, wis, cha.")
	}
	var r Roll
	if s.Config.Ruleset == RulesetD20 {
		if difficulty < 1 || difficulty > 30 {
			return false, Roll{}, Errorf(EINVALID, "A d20 check's DC is 1 to 30.")
		}
		r = d.Roll(c.Name, strings.ToUpper(stat)+" check (DC "+fmt.Sprint(difficulty)+")", 1, 20, Mod(v))
	} else {
		if difficulty < 1 || difficulty > 100 {
			return false, Roll{}, Errorf(EINVALID, "A d100 check's difficulty is 1 to 100.")
		}
		r = d.Roll(c.Name, strings.ToUpper(stat)+" check (difficulty "+fmt.Sprint(difficulty)+")", 1, 100, 5*Mod(v))
	}
	return r.Total >= difficulty, r, nil
}
