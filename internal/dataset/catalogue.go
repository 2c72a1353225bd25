package dataset

// Column describes one column of a curated view for the model.
type Column struct {
	Name string `json:"name"`
	// Type is the SQLite type the column's values have: TEXT, INTEGER or
	// REAL (NULL is possible where the meaning says so).
	Type    string `json:"type"`
	Meaning string `json:"meaning"`
}

// View describes one curated view: what a row is, its columns and, from
// [Dataset.Describe], how many rows it has now.
type View struct {
	Name    string   `json:"name"`
	Meaning string   `json:"meaning"`
	Rows    int64    `json:"rows"`
	Columns []Column `json:"columns"`
}

// catalogue is the one description of the views of
// migrations/0005_data_views.sql, in the views' column order (a test
// compares them). It is what the model reads; the meanings say the units
// and the value sets it needs to write correct SQL.
var catalogue = []View{
	{Name: "v_tables", Meaning: "one row per game table (a campaign instance with its players)", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"name", "TEXT", "table name chosen by its owner"},
		{"adventure", "TEXT", "adventure id the table plays (e.g. greyhollow)"},
		{"ruleset", "TEXT", "dice rules: d20 or d100"},
		{"combat_mode", "TEXT", "how fights run: tactical (initiative turns) or narrative"},
		{"turn_timeout_s", "INTEGER", "seconds a player has for a combat turn, 0 = no timer"},
		{"seat_count", "INTEGER", "number of seats at the table"},
		{"seated", "INTEGER", "seats taken now"},
		{"turns_played", "INTEGER", "DM turns played so far (rows of v_turns)"},
		{"last_event_at", "TEXT", "time of the table's latest event, NULL if none"},
		{"created_at", "TEXT", "creation time (UTC RFC 3339)"},
		{"created_day", "TEXT", "creation day YYYY-MM-DD (UTC)"},
	}},
	{Name: "v_players", Meaning: "one row per player identity (name only; tokens are never exposed)", Columns: []Column{
		{"player_id", "TEXT", "player id"},
		{"name", "TEXT", "display name"},
		{"created_at", "TEXT", "when the identity was made (UTC RFC 3339)"},
		{"created_day", "TEXT", "day YYYY-MM-DD (UTC) it was made"},
		{"seated_at", "INTEGER", "number of tables where the player holds a seat now"},
	}},
	{Name: "v_seats", Meaning: "one row per taken seat: a player bound to a character at a table", Columns: []Column{
		{"table_id", "TEXT", "table id (v_tables.table_id)"},
		{"seat", "TEXT", "seat id at that table"},
		{"player_id", "TEXT", "player id (v_players.player_id)"},
		{"player_name", "TEXT", "player's display name, NULL if unknown"},
		{"character_id", "TEXT", "character id (v_characters.character_id)"},
		{"character_name", "TEXT", "character's name, NULL if the character is gone"},
		{"joined_at", "TEXT", "when the seat was taken (UTC RFC 3339)"},
	}},
	{Name: "v_characters", Meaning: "one row per player character, with its current state", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"character_id", "TEXT", "character id, unique within its table"},
		{"player_id", "TEXT", "owning player id"},
		{"seat", "TEXT", "seat id"},
		{"name", "TEXT", "character name"},
		{"class", "TEXT", "character class from the adventure's catalogue"},
		{"level", "INTEGER", "level"},
		{"xp", "INTEGER", "experience points"},
		{"hp", "INTEGER", "current hit points (0 = down)"},
		{"max_hp", "INTEGER", "maximum hit points"},
		{"alive", "INTEGER", "1 if hp > 0, else 0"},
		{"gold", "INTEGER", "gold carried"},
		{"weapon", "TEXT", "equipped weapon"},
		{"armour", "TEXT", "equipped armour"},
		{"location", "TEXT", "location id where the character is"},
		{"statuses", "TEXT", "JSON array of status names (or null)"},
	}},
	{Name: "v_events", Meaning: "one row per table event (the public game log), with common fields extracted", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"seq", "INTEGER", "event number, increasing by one per table"},
		{"ts", "TEXT", "event time (UTC RFC 3339)"},
		{"day", "TEXT", "event day YYYY-MM-DD (UTC)"},
		{"kind", "TEXT", "player_joined, player_left, action, chat, narration, dice, damage, heal, status, combat_started, turn, combat_ended, mode, world or system"},
		{"turn", "TEXT", "turn id 't<N>' of the DM turn that made the event ('' for chat and seat changes)"},
		{"agent", "TEXT", "narration only: narrative or combat (the DM agent that spoke)"},
		{"roller", "TEXT", "dice only: who rolled"},
		{"purpose", "TEXT", "dice only: what the roll was for (e.g. initiative, attack, damage)"},
		{"notation", "TEXT", "dice only: dice notation such as 1d20+3"},
		{"total", "INTEGER", "dice only: the roll's total"},
		{"target", "TEXT", "damage, heal and status only: who was affected"},
		{"amount", "INTEGER", "damage and heal only: hit points lost or gained"},
		{"combat_id", "TEXT", "combat_started and combat_ended only: fight id within the table"},
		{"outcome", "TEXT", "combat_ended only: player_win, player_flee, player_die, npc_flee, forced_end or error_abort"},
		{"code", "TEXT", "system only: the system message code"},
		{"data", "TEXT", "the event's full JSON payload (use json_extract)"},
	}},
	{Name: "v_turns", Meaning: "one row per played DM turn (a turn whose narration was committed; the adventure intro is not a turn)", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"turn", "TEXT", "turn id 't<N>' (joins v_events.turn)"},
		{"turn_no", "INTEGER", "turn number N"},
		{"agent", "TEXT", "narrative or combat: the DM agent that played it"},
		{"seq", "INTEGER", "seq of the turn's first narration event"},
		{"ts", "TEXT", "time the turn was committed (UTC RFC 3339)"},
		{"day", "TEXT", "day YYYY-MM-DD (UTC)"},
		{"action_id", "TEXT", "pending action the turn resolved, NULL if none"},
		{"narration_chars", "INTEGER", "length of the turn's narration text in characters"},
	}},
	{Name: "v_combats", Meaning: "one row per ended fight", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"combat_id", "TEXT", "fight id within the table"},
		{"ruleset", "TEXT", "the table's ruleset: d20 or d100"},
		{"combat_mode", "TEXT", "tactical or narrative"},
		{"adventure", "TEXT", "the table's adventure id"},
		{"started_at", "TEXT", "start time (UTC RFC 3339), NULL if unknown"},
		{"ended_at", "TEXT", "end time (UTC RFC 3339)"},
		{"day", "TEXT", "day YYYY-MM-DD (UTC) the fight ended"},
		{"duration_s", "INTEGER", "seconds from start to end, NULL if unknown"},
		{"rounds", "INTEGER", "initiative rounds played, NULL if none were logged"},
		{"outcome", "TEXT", "player_win, player_flee, player_die (the party died), npc_flee, forced_end or error_abort"},
		{"party_won", "INTEGER", "1 if outcome is player_win"},
		{"party_fled", "INTEGER", "1 if outcome is player_flee"},
		{"party_died", "INTEGER", "1 if outcome is player_die"},
		{"xp", "INTEGER", "experience points awarded"},
		{"gold", "INTEGER", "gold awarded"},
		{"loot_items", "INTEGER", "number of loot items awarded"},
	}},
	{Name: "v_llm_calls", Meaning: "one row per language-model call (the LLM call log)", Columns: []Column{
		{"call_id", "INTEGER", "call number, increasing"},
		{"table_id", "TEXT", "table the call was for, '' if none"},
		{"agent", "TEXT", "narrative, combat, summary or data"},
		{"model", "TEXT", "model id (e.g. gpt-4o-mini, offline)"},
		{"started_at", "TEXT", "start time (UTC RFC 3339)"},
		{"day", "TEXT", "day YYYY-MM-DD (UTC)"},
		{"hour", "TEXT", "hour YYYY-MM-DDTHH:00 (UTC)"},
		{"latency_ms", "INTEGER", "latency in milliseconds"},
		{"prompt_tokens", "INTEGER", "prompt tokens, cached ones included"},
		{"cached_tokens", "INTEGER", "prompt tokens served from the provider's cache"},
		{"completion_tokens", "INTEGER", "completion tokens"},
		{"total_tokens", "INTEGER", "prompt_tokens + completion_tokens"},
		{"cost_usd", "REAL", "estimated cost in US dollars"},
		{"ok", "INTEGER", "1 if the call succeeded, 0 if it failed"},
		{"error_kind", "TEXT", "'' if ok, else timeout, canceled, rate_limited, auth, server, network or other"},
	}},
	{Name: "v_tool_calls", Meaning: "one row per tool call a DM agent's model made, with whether the tool refused it", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"agent", "TEXT", "narrative or combat"},
		{"turn", "INTEGER", "turn number N of the call (v_turns.turn_no)"},
		{"message_id", "INTEGER", "id of the model message that made the call"},
		{"created_at", "TEXT", "time the turn's messages were stored (UTC RFC 3339)"},
		{"day", "TEXT", "day YYYY-MM-DD (UTC)"},
		{"call_id", "TEXT", "the model's id for the call"},
		{"tool", "TEXT", "tool name the model called"},
		{"arguments", "TEXT", "the call's JSON arguments as the model wrote them"},
		{"outcome", "TEXT", "ok, error (the tool refused with an error), unknown_tool, ignored (after the turn ended) or unanswered"},
		{"failed", "INTEGER", "1 if outcome is error or unknown_tool: the model got the call wrong"},
		{"error", "TEXT", "the tool's error sentence, '' if none"},
	}},
	{Name: "v_pending_actions", Meaning: "one row per player action the server acknowledged (its durable queue)", Columns: []Column{
		{"table_id", "TEXT", "table id"},
		{"action_id", "TEXT", "action id"},
		{"player_id", "TEXT", "acting player id"},
		{"character_id", "TEXT", "acting character id"},
		{"seat", "TEXT", "seat id"},
		{"kind", "TEXT", "act (a player's action) or start (a session start)"},
		{"status", "TEXT", "pending or resolved"},
		{"text", "TEXT", "what the player wrote"},
		{"created_at", "TEXT", "when it was acknowledged (UTC RFC 3339)"},
		{"day", "TEXT", "day YYYY-MM-DD (UTC)"},
		{"resolved_at", "TEXT", "when a turn resolved it, NULL while pending"},
		{"wait_s", "INTEGER", "seconds from acknowledgement to resolution, NULL while pending"},
	}},
}

// Views returns the curated views with their meanings (Rows is 0; use
// [Dataset.Describe] for row counts). The result is a fresh copy the caller
// owns.
func Views() []View {
	out := make([]View, len(catalogue))
	for i, v := range catalogue {
		v.Columns = append([]Column(nil), v.Columns...)
		out[i] = v
	}
	return out
}
