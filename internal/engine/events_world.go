package engine

import "encoding/json"

// --- the world (kind `world`: one key says what changed) ---

// The payloads of `world` events, one per change. Their keys tell them
// apart when decoded (decodeWorld).
type (
	// PartyAtData is the party set down at Location (after a fight).
	PartyAtData struct {
		Location string `json:"location"`
	}
	// PartyMovedData is the party travelling to Location.
	PartyMovedData struct {
		Location string `json:"location"`
		Name     string `json:"name"`
	}
	// InventoryData is an item coming into or leaving a character's
	// inventory.
	InventoryData struct {
		Inventory InventoryChange `json:"inventory"`
	}
	// EquippedData is a character equipping an item.
	EquippedData struct {
		Equipped EquipChange `json:"equipped"`
	}
	// GoldData is a character's gold changing.
	GoldData struct {
		Gold GoldChange `json:"gold"`
	}
	// XPData is a character gaining XP.
	XPData struct {
		XP XPChange `json:"xp"`
	}
	// RelationshipData is the relationship between two beings changing.
	RelationshipData struct {
		Relationship RelationshipChange `json:"relationship"`
	}
	// NPCMovedData is an NPC going to another location.
	NPCMovedData struct {
		LocationName string `json:"location_name"`
		NPC          string `json:"npc"`
		NPCLocation  string `json:"npc_location"`
	}
	// NPCCreatedData is an NPC appearing in the world (Created is true).
	NPCCreatedData struct {
		Created     bool   `json:"created"`
		NPC         string `json:"npc"`
		NPCLocation string `json:"npc_location"`
	}
	// NPCBehaviorData is an NPC's behaviour changing.
	NPCBehaviorData struct {
		Behavior string `json:"behavior"`
		NPC      string `json:"npc"`
	}
	// QuestData is a quest offered or changing status.
	QuestData struct {
		Quest QuestChange `json:"quest"`
	}
	// LocationCreatedData is a location added to the world.
	LocationCreatedData struct {
		Name        string `json:"name"`
		NewLocation string `json:"new_location"`
	}
)

// InventoryChange is an item Added to or Removed from (one of them, by
// name) a character's inventory.
type InventoryChange struct {
	Added       string `json:"added,omitempty"`
	CharacterID string `json:"character_id"`
	ItemID      string `json:"item_id"`
	Removed     string `json:"removed,omitempty"`
}

// EquipChange is a character equipping Item in Slot ("weapon", "armour").
type EquipChange struct {
	CharacterID string `json:"character_id"`
	Item        string `json:"item"`
	ItemID      string `json:"item_id"`
	Slot        string `json:"slot"`
}

// GoldChange is a character's gold changing by Change to Gold.
type GoldChange struct {
	Change      int    `json:"change"`
	CharacterID string `json:"character_id"`
	Gold        int    `json:"gold"`
	Reason      string `json:"reason"`
}

// XPChange is a character gaining Gain XP, to XP at Level.
type XPChange struct {
	CharacterID string `json:"character_id"`
	Gain        int    `json:"gain"`
	Level       int    `json:"level"`
	XP          int    `json:"xp"`
}

// RelationshipChange is the relationship between the beings named A and B
// becoming Value.
type RelationshipChange struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Value int    `json:"value"`
}

// QuestChange is a quest's new status.
type QuestChange struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

func (PartyAtData) EventKind() Kind         { return EventWorld }
func (PartyMovedData) EventKind() Kind      { return EventWorld }
func (InventoryData) EventKind() Kind       { return EventWorld }
func (EquippedData) EventKind() Kind        { return EventWorld }
func (GoldData) EventKind() Kind            { return EventWorld }
func (XPData) EventKind() Kind              { return EventWorld }
func (RelationshipData) EventKind() Kind    { return EventWorld }
func (NPCMovedData) EventKind() Kind        { return EventWorld }
func (NPCCreatedData) EventKind() Kind      { return EventWorld }
func (NPCBehaviorData) EventKind() Kind     { return EventWorld }
func (QuestData) EventKind() Kind           { return EventWorld }
func (LocationCreatedData) EventKind() Kind { return EventWorld }

// worldKeys names the payload of a `world` event by the first of these
// keys its data holds: the nested changes first, then the NPC's, then
// the party's, whose keys the others share.
var worldKeys = []struct {
	key    string
	decode func([]byte) (Payload, error)
}{
	{"inventory", decodeAs[InventoryData]},
	{"equipped", decodeAs[EquippedData]},
	{"gold", decodeAs[GoldData]},
	{"xp", decodeAs[XPData]},
	{"relationship", decodeAs[RelationshipData]},
	{"quest", decodeAs[QuestData]},
	{"new_location", decodeAs[LocationCreatedData]},
	{"created", decodeAs[NPCCreatedData]},
	{"behavior", decodeAs[NPCBehaviorData]},
	{"npc", decodeAs[NPCMovedData]},
	{"name", decodeAs[PartyMovedData]},
	{"location", decodeAs[PartyAtData]},
}

// worldDecoder is the decoder of a `world` event's data by its keys: nil
// for a change this package does not know, or data that is no object.
func worldDecoder(data []byte) func([]byte) (Payload, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil {
		return decodeAs[PartyAtData] // fails with the JSON's own error
	}
	for _, w := range worldKeys {
		if _, ok := keys[w.key]; ok {
			return w.decode
		}
	}
	return nil
}

// PartyAtEvent is the party set down at location (after a fight).
func PartyAtEvent(location string) Event { return NewEvent(PartyAtData{Location: location}) }

// PartyMovedEvent is the party travelling to l.
func PartyMovedEvent(l *Location) Event {
	return NewEvent(PartyMovedData{Location: l.ID, Name: l.Name})
}

// ItemAddedEvent is it coming into the character's inventory.
func ItemAddedEvent(characterID string, it *Item) Event {
	return NewEvent(InventoryData{InventoryChange{CharacterID: characterID, Added: it.Name, ItemID: it.ID}})
}

// ItemRemovedEvent is it leaving the character's inventory.
func ItemRemovedEvent(characterID string, it *Item) Event {
	return NewEvent(InventoryData{InventoryChange{CharacterID: characterID, Removed: it.Name, ItemID: it.ID}})
}

// EquippedEvent is a character equipping it in slot ("weapon", "armour").
func EquippedEvent(characterID string, it *Item, slot string) Event {
	return NewEvent(EquippedData{EquipChange{CharacterID: characterID, Item: it.Name, ItemID: it.ID, Slot: slot}})
}

// GoldEvent is a character's gold changing by change to gold.
func GoldEvent(characterID string, change, gold int, reason string) Event {
	return NewEvent(GoldData{GoldChange{CharacterID: characterID, Change: change, Gold: gold, Reason: reason}})
}

// XPEvent is c gaining gain XP (c holds its new XP and level).
func XPEvent(c *Character, gain int) Event {
	return NewEvent(XPData{XPChange{CharacterID: c.ID, Gain: gain, XP: c.XP, Level: c.Level}})
}

// RelationshipEvent is the relationship between the beings named a and b
// becoming value.
func RelationshipEvent(a, b string, value int) Event {
	return NewEvent(RelationshipData{RelationshipChange{A: a, B: b, Value: value}})
}

// NPCMovedEvent is the NPC named name going to l.
func NPCMovedEvent(name string, l *Location) Event {
	return NewEvent(NPCMovedData{NPC: name, NPCLocation: l.ID, LocationName: l.Name})
}

// NPCCreatedEvent is n appearing in the world.
func NPCCreatedEvent(n *NPC) Event {
	return NewEvent(NPCCreatedData{NPC: n.Name, NPCLocation: n.Location, Created: true})
}

// NPCBehaviorEvent is n's behaviour changing.
func NPCBehaviorEvent(n *NPC) Event {
	return NewEvent(NPCBehaviorData{NPC: n.Name, Behavior: n.Behavior})
}

// QuestEvent is q offered or changing status.
func QuestEvent(q *Quest) Event {
	return NewEvent(QuestData{QuestChange{ID: q.ID, Name: q.Name, Status: q.Status}})
}

// LocationCreatedEvent is l added to the world.
func LocationCreatedEvent(l *Location) Event {
	return NewEvent(LocationCreatedData{NewLocation: l.ID, Name: l.Name})
}
