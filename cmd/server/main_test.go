package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestRunSettings: -h lists the settings and succeeds; a setting it cannot
// read stops the start, naming it.
func TestRunSettings(t *testing.T) {
	none := func(string) string { return "" }
	var help bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, none, io.Discard, &help); err != nil {
		t.Errorf("-h: %v", err)
	}
	for _, want := range []string{"-addr", "TAVERN_DB", "TAVERN_ADMIN_TOKEN", "OPENAI_API_KEY", "127.0.0.1:8080"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("-h does not mention %s:\n%s", want, help.String())
		}
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		say  string
	}{
		{"bad variable", nil, map[string]string{"TAVERN_EVICT_AFTER": "soon"}, "TAVERN_EVICT_AFTER"},
		{"bad flag", []string{"-evict-after", "soon"}, nil, "evict-after"},
		{"stray argument", []string{"serve"}, nil, "serve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := run(context.Background(), c.args, func(k string) string { return c.env[k] }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.say) {
				t.Errorf("err %v, want one naming %q", err, c.say)
			}
		})
	}
}
