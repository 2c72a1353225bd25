package main

import (
	"testing"

	"tavern/internal/openai"
)

func TestPickModels(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name                       string
		getenv                     func(string) string
		dm, narrative, combat, sum string
	}{
		{"offline", env(), "offline", "offline", "offline", "offline"},
		{"key", env("OPENAI_API_KEY", "k"), openai.DefaultModel, openai.DefaultModel, openai.DefaultModel, openai.DefaultModel},
		{"local server", env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1", "TAVERN_MODEL", "llama3.1"), "llama3.1 @ 127.0.0.1:11434", "llama3.1", "llama3.1", "llama3.1"},
		{"per agent", env("OPENAI_API_KEY", "k", "TAVERN_MODEL", "m", "TAVERN_MODEL_COMBAT", "c", "TAVERN_MODEL_SUMMARY", "s"), "m, combat: c", "m", "c", "s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := pickModels(c.getenv, openai.Config{})
			if ms.DM != c.dm || ms.Narrative.Name() != c.narrative || ms.Combat.Name() != c.combat || ms.Summary.Name() != c.sum {
				t.Errorf("got %q %q %q %q", ms.DM, ms.Narrative.Name(), ms.Combat.Name(), ms.Summary.Name())
			}
			if ms.Online != (c.dm != "offline") {
				t.Errorf("online %v", ms.Online)
			}
		})
	}
}
