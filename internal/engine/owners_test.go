package engine

import "testing"

func TestHealthWord(t *testing.T) {
	for _, c := range []struct {
		hp, max int
		want    string
	}{
		{10, 10, HealthUnhurt}, {12, 10, HealthUnhurt}, {9, 10, HealthWounded}, {6, 10, HealthWounded},
		{5, 10, HealthBloodied}, {3, 10, HealthBloodied}, {2, 10, HealthNearDeath}, {1, 10, HealthNearDeath},
		{0, 10, HealthDown}, {-3, 10, HealthDown}, {1, 1, HealthUnhurt},
	} {
		if got := HealthWord(c.hp, c.max); got != c.want {
			t.Errorf("HealthWord(%d, %d) = %q, want %q", c.hp, c.max, got, c.want)
		}
	}
}

func TestSettingsPatchValidate(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	for _, c := range []struct {
		name string
		p    SettingsPatch
		ok   bool
	}{
		{"empty", SettingsPatch{}, false},
		{"name", SettingsPatch{Name: str(" Friday ")}, true},
		{"blank name", SettingsPatch{Name: str("  ")}, false},
		{"words", SettingsPatch{NPCHP: str(NPCHPWords)}, true},
		{"blank npc_hp", SettingsPatch{NPCHP: str("")}, false},
		{"unknown npc_hp", SettingsPatch{NPCHP: str("percent")}, false},
		{"timer off", SettingsPatch{TurnTimeoutS: num(0)}, true},
		{"timer negative", SettingsPatch{TurnTimeoutS: num(-1)}, false},
		{"timer too long", SettingsPatch{TurnTimeoutS: num(MaxTurnTimeoutS + 1)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.p.Validate()
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if err != nil && ErrorCode(err) != EINVALID {
				t.Errorf("code %s", ErrorCode(err))
			}
			if c.name == "name" && *got.Name != "Friday" {
				t.Errorf("name not trimmed: %q", *got.Name)
			}
		})
	}
	if _, err := (TableSpec{Name: "T", NPCHP: "percent"}).Validate(nil); ErrorCode(err) != EINVALID {
		t.Errorf("a table spec with npc_hp percent: %v", err)
	}
}
