package tavern

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
)

var update = flag.Bool("update", false, "rewrite the README's table of settings")

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// parse reads cfg as cmd/server does: defaults, then the environment,
// then the flags.
func parse(getenv func(string) string, args ...string) (Config, error) {
	cfg := DefaultConfig()
	if err := cfg.FromEnv(getenv); err != nil {
		return cfg, err
	}
	fs := flag.NewFlagSet("tavern", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return cfg, cfg.check()
}

func TestConfigSources(t *testing.T) {
	cfg, err := parse(envOf("TAVERN_ADDR", "127.0.0.1:9", "TAVERN_QUOTAS", "off", "TAVERN_EVICT_AFTER", "0", "TAVERN_LOG_LEVEL", "warn",
		"TAVERN_ADMIN_TOKEN", "secret", "TAVERN_MODEL_DATA", "analyst", "TAVERN_LLM_IDLE_TIMEOUT", "3s",
		"TAVERN_HISTORY_MIN_MESSAGES", "6", "TAVERN_HISTORY_MAX_MESSAGES", "8", "TAVERN_HISTORY_SUMMARIES", "2",
		"TAVERN_SOCKETS_PER_ADDR", "40", "TAVERN_PING_INTERVAL", "20s"),
		"-addr", "127.0.0.1:0", "-quota-tables", "9", "-history-max-messages", "12", "-history-tokens", "9000",
		"-sockets-per-player", "4", "-ping-interval", "30s")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Addr, want.Quotas, want.EvictAfter, want.LogLevel = "127.0.0.1:0", false, 0, slog.LevelWarn
	want.AdminToken, want.ModelData, want.LLMIdle, want.QuotaTables = "secret", "analyst", 3*time.Second, 9
	want.HistoryMin, want.HistoryMax, want.HistorySummaries, want.HistoryTokens = 6, 12, 2, 9000
	want.SocketsPerPlayer, want.SocketsPerAddr, want.PingInterval = 4, 40, 30*time.Second
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
}

func TestConfigRefuses(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		args []string
		say  string // in the error
	}{
		{"junk number", []string{"TAVERN_QUOTA_PLAYERS", "lots"}, nil, "TAVERN_QUOTA_PLAYERS"},
		{"zero quota", nil, []string{"-quota-tables", "0"}, "quota"},
		{"quotas neither on nor off", []string{"TAVERN_QUOTAS", "maybe"}, nil, "TAVERN_QUOTAS"},
		{"negative eviction", nil, []string{"-evict-after", "-1s"}, "evict-after"},
		{"junk duration", []string{"TAVERN_LLM_TIMEOUT", "soon"}, nil, "TAVERN_LLM_TIMEOUT"},
		{"negative timeout", []string{"TAVERN_LLM_FIRST_TOKEN_TIMEOUT", "-1s"}, nil, "llm timeouts"},
		{"junk prices", []string{"TAVERN_PRICES", "x"}, nil, "prices"},
		{"junk level", nil, []string{"-log-level", "loud"}, "log-level"},
		{"secret as a flag", nil, []string{"-admin-token", "x"}, "admin-token"},
		{"window under one turn", []string{"TAVERN_HISTORY_MIN_MESSAGES", "2"}, nil, "history-min-messages 2 (TAVERN_HISTORY_MIN_MESSAGES): a window smaller than one turn's 3 messages"},
		{"no window", nil, []string{"-history-min-messages", "0"}, "history-min-messages 0"},
		{"max under min", nil, []string{"-history-min-messages", "12", "-history-max-messages", "11"}, "history-max-messages 11 (TAVERN_HISTORY_MAX_MESSAGES) is below history-min-messages 12"},
		{"max under the default min", []string{"TAVERN_HISTORY_MAX_MESSAGES", "4"}, nil, "history-max-messages 4"},
		{"no token budget", nil, []string{"-history-tokens", "0"}, "history-tokens 0 (TAVERN_HISTORY_TOKENS)"},
		{"no summaries", []string{"TAVERN_HISTORY_SUMMARIES", "0"}, nil, "history-summaries 0 (TAVERN_HISTORY_SUMMARIES)"},
		{"no sockets", nil, []string{"-sockets-per-addr", "0"}, "sockets-per-addr 0"},
		{"no player sockets", []string{"TAVERN_SOCKETS_PER_PLAYER", "-1"}, nil, "sockets-per-player -1"},
		{"pings too often", nil, []string{"-ping-interval", "10ms"}, "ping-interval 10ms"},
		{"junk window", []string{"TAVERN_HISTORY_MAX_MESSAGES", "many"}, nil, "TAVERN_HISTORY_MAX_MESSAGES"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(envOf(c.env...), c.args...)
			if err == nil || !strings.Contains(err.Error(), c.say) {
				t.Errorf("err %v, want one naming %q", err, c.say)
			}
		})
	}
}

// TestDefaultWindow: the window settings' defaults are the agent
// package's, so a Tavern with default settings plays as before.
func TestDefaultWindow(t *testing.T) {
	def := DefaultConfig()
	if got, want := def.window(), agent.DefaultWindow(); got != want {
		t.Errorf("window %+v, want %+v", got, want)
	}
	if want := (agent.WindowConfig{MinMessages: 10, MaxMessages: 20, TokenBudget: 6000, Summaries: 3}); def.window() != want {
		t.Errorf("window %+v, want seed 001's %+v", def.window(), want)
	}
}

// TestUsageListsEverySetting: tavern -h names every flag and variable
// with its default.
func TestUsageListsEverySetting(t *testing.T) {
	var b bytes.Buffer
	Usage(&b)
	def := DefaultConfig()
	for _, s := range settings {
		line := ""
		for l := range strings.Lines(b.String()) {
			if strings.Contains(l, " "+s.Env+" ") {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, flagName(s)) || !strings.Contains(line, defaultOf(s, &def)) {
			t.Errorf("%s: line %q, want its flag %s and default %s", s.Env, line, flagName(s), defaultOf(s, &def))
		}
	}
}

// TestREADMEListsEverySetting keeps the README's table of settings the
// one Usage prints; -update rewrites it.
func TestREADMEListsEverySetting(t *testing.T) {
	const path = "../../README.md"
	const begin, end = "<!-- settings: generated by go test ./internal/tavern -update -->\n", "<!-- end of settings -->\n"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(b), begin)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("README.md has no %q … %q section", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	want := before + begin + markdownTable() + end + after
	if want == string(b) {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's settings differ from Config's; run go test ./internal/tavern -update. Want:\n%s", markdownTable())
}

// markdownTable is the settings as the README shows them.
func markdownTable() string {
	def := DefaultConfig()
	var b strings.Builder
	b.WriteString("| flag | environment | default | what |\n| --- | --- | --- | --- |\n")
	for _, s := range settings {
		f := "`" + flagName(s) + "`"
		if s.Flag == "" {
			f = flagName(s)
		}
		b.WriteString("| " + f + " | `" + s.Env + "` | `" + defaultOf(s, &def) + "` | " + s.Usage + " |\n")
	}
	return b.String()
}
