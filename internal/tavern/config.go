package tavern

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"tavern/internal/agent"
	"tavern/internal/hub"
	"tavern/internal/openai"
	"tavern/web"
)

// Config is every setting of a Tavern. DefaultConfig gives the defaults;
// FromEnv and Flags read them from the environment and the command line.
// What each setting does is written once, in the settings table below
// (tavern -h prints it). The fields after the settings are for programs
// and tests that build a Tavern in-process; they have no flag or variable.
type Config struct {
	// The server.
	Addr     string
	DB       string
	LogLevel slog.Level
	Pprof    string

	// Several nodes on PostgreSQL (DESIGN.md "Beyond one machine").
	DBMaxConns   int
	NodeAddr     string
	ClusterToken string
	LeaseTTL     time.Duration
	LeaseRenew   time.Duration
	OrphanSweep  time.Duration

	// The operator and the limits.
	AdminToken   string
	Quotas       bool
	QuotaPlayers int
	QuotaTables  int
	EvictAfter   time.Duration
	// The sockets (PROTOCOL.md "Limits and close codes").
	SocketsPerPlayer int
	SocketsPerAddr   int
	PingInterval     time.Duration

	// The game master's models.
	OpenAIKey      string
	OpenAIBaseURL  string
	Model          string
	ModelNarrative string
	ModelCombat    string
	ModelSummary   string
	ModelData      string
	LLMTimeout     time.Duration
	LLMFirstToken  time.Duration
	LLMIdle        time.Duration
	LLMAttempt     time.Duration
	Streaming      string
	Prices         string

	// The operator's budgets and alerts.
	BudgetDayUSD        float64
	AlertModelErrorRate float64
	AlertModelP95       time.Duration
	AlertSpendHourUSD   float64
	AlertActionWait     time.Duration
	AlertCommitP95      time.Duration
	AlertEvery          time.Duration

	// The agents' history window (agent.WindowConfig).
	HistoryMin       int
	HistoryMax       int
	HistorySummaries int
	HistoryTokens    int

	// LogOutput receives the logs, as text at LogLevel; nil discards them.
	LogOutput io.Writer
	// Runner, if set, plays the game master's turns in place of the one
	// the model settings build, with its own Window. Its models' calls
	// are not logged.
	Runner *agent.Runner
	// Hub, if set, adjusts the hub's configuration before the hub is
	// built: a test's clock, seed or wrapped store.
	Hub func(*hub.Config)
	// Web, if set, adjusts the web handler's configuration before the
	// handler is built: a test's exact quotas, wrapped player store or
	// data agent.
	Web func(*web.Config)
	// OpenAI, if set, adjusts the OpenAI adapter's configuration before
	// the models are built: a test's attempts and backoff.
	OpenAI func(*openai.Config)
	// Narrator, if set, stands in for the offline narrator when no model
	// server is set: a test's model that fails on demand. Unlike Runner's
	// models, its calls go to the call log, priced by its Name.
	Narrator agent.Model
	// ShutdownTimeout bounds Close's wait for requests in flight
	// (default 15s).
	ShutdownTimeout time.Duration
}

// DefaultConfig returns the defaults of every setting.
func DefaultConfig() Config {
	win := agent.DefaultWindow()
	return Config{
		Addr:         "127.0.0.1:8080",
		DB:           "data/tavern.db",
		LogLevel:     slog.LevelInfo,
		DBMaxConns:   16,
		LeaseTTL:     10 * time.Second,
		LeaseRenew:   2 * time.Second,
		OrphanSweep:  3 * time.Second,
		Quotas:       true,
		QuotaPlayers: 20,
		QuotaTables:  6,
		EvictAfter:   10 * time.Minute,
		// PROTOCOL.md "Limits and close codes".
		SocketsPerPlayer: 32,
		SocketsPerAddr:   512,
		PingInterval:     60 * time.Second,
		Model:            openai.DefaultModel,
		// The OpenAI adapter's own defaults, shown here so that -h tells
		// them (openai.Config).
		LLMTimeout:    60 * time.Second,
		LLMFirstToken: 10 * time.Second,
		LLMIdle:       15 * time.Second,
		// Three attempts at an action and their backoff (1 s, 4 s) end
		// within 90 s: a hung model's action is given up by then.
		LLMAttempt: 25 * time.Second,
		Streaming:  openai.StreamAuto,
		// The agent package's window, for the same reason.
		HistoryMin:       win.MinMessages,
		HistoryMax:       win.MaxMessages,
		HistorySummaries: win.Summaries,
		HistoryTokens:    win.TokenBudget,
		// The operator's alerts (internal/alert; deploy/prometheus/alerts.yml
		// holds the same thresholds).
		AlertModelErrorRate: 0.25,
		AlertModelP95:       30 * time.Second,
		AlertSpendHourUSD:   5,
		AlertActionWait:     10 * time.Minute,
		AlertCommitP95:      500 * time.Millisecond,
		AlertEvery:          15 * time.Second,
	}
}

// window is the agents' history window the settings make.
func (c *Config) window() agent.WindowConfig {
	return agent.WindowConfig{MinMessages: c.HistoryMin, MaxMessages: c.HistoryMax, Summaries: c.HistorySummaries, TokenBudget: c.HistoryTokens}
}

// A setting is one field of Config with its flag and its environment
// variable. Flag is empty for secrets, which a command line would show to
// every user of the machine (ps).
type setting struct {
	Flag, Env, Usage string
	value            func(*Config) flag.Value
}

// settings lists every setting, in the order -h and the README show them.
// It is the one list: Flags, FromEnv, Usage and the README's table
// (checked by TestREADMEListsEverySetting) all come from it.
var settings = []setting{
	{"addr", "TAVERN_ADDR", "listen address (host:port; port 0 picks a free one)", func(c *Config) flag.Value { return (*stringValue)(&c.Addr) }},
	{"db", "TAVERN_DB", "SQLite file, created with its directory if missing (one server per file), or a postgres:// URL to run several nodes", func(c *Config) flag.Value { return (*stringValue)(&c.DB) }},
	{"db-max-conns", "TAVERN_DB_MAX_CONNS", "PostgreSQL: connections of this node's pool", func(c *Config) flag.Value { return (*intValue)(&c.DBMaxConns) }},
	{"node-addr", "TAVERN_NODE_ADDR", "PostgreSQL: host:port the other nodes reach this one at (empty: -addr, which must then not be a wildcard)", func(c *Config) flag.Value { return (*stringValue)(&c.NodeAddr) }},
	{"", "TAVERN_CLUSTER_TOKEN", "PostgreSQL: secret shared by the nodes, signing the requests one forwards to another", func(c *Config) flag.Value { return (*stringValue)(&c.ClusterToken) }},
	{"lease-ttl", "TAVERN_LEASE_TTL", "PostgreSQL: a node not heard from this long (the database's clock) is dead and its tables are claimed", func(c *Config) flag.Value { return (*durationValue)(&c.LeaseTTL) }},
	{"lease-renew", "TAVERN_LEASE_RENEW", "PostgreSQL: how often a node renews its lease; well under -lease-ttl", func(c *Config) flag.Value { return (*durationValue)(&c.LeaseRenew) }},
	{"orphan-sweep", "TAVERN_ORPHAN_SWEEP", "PostgreSQL: how often a node claims the tables of dead nodes that have open actions or a fight", func(c *Config) flag.Value { return (*durationValue)(&c.OrphanSweep) }},
	{"log-level", "TAVERN_LOG_LEVEL", "debug, info, warn or error", func(c *Config) flag.Value { return (*levelValue)(&c.LogLevel) }},
	{"pprof", "TAVERN_PPROF", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (empty: off)", func(c *Config) flag.Value { return (*stringValue)(&c.Pprof) }},
	{"", "TAVERN_ADMIN_TOKEN", "the operator's token for /admin and /metrics (empty: a new one each start, printed once)", func(c *Config) flag.Value { return (*stringValue)(&c.AdminToken) }},
	{"quotas", "TAVERN_QUOTAS", "on or off: rate limits on creating players and tables per client address (off for load tests)", func(c *Config) flag.Value { return (*onOffValue)(&c.Quotas) }},
	{"quota-players", "TAVERN_QUOTA_PLAYERS", "players one client address may create a minute (bursts as many)", func(c *Config) flag.Value { return (*intValue)(&c.QuotaPlayers) }},
	{"quota-tables", "TAVERN_QUOTA_TABLES", "tables one client address may create a minute (bursts of 10 at least)", func(c *Config) flag.Value { return (*intValue)(&c.QuotaTables) }},
	{"evict-after", "TAVERN_EVICT_AFTER", "unload a table idle this long: no socket, action, turn or timer (0: never)", func(c *Config) flag.Value { return (*durationValue)(&c.EvictAfter) }},
	{"sockets-per-player", "TAVERN_SOCKETS_PER_PLAYER", "websockets one player may hold open; one more is refused 429", func(c *Config) flag.Value { return (*intValue)(&c.SocketsPerPlayer) }},
	{"sockets-per-addr", "TAVERN_SOCKETS_PER_ADDR", "websockets one client address may hold open; one more is refused 429", func(c *Config) flag.Value { return (*intValue)(&c.SocketsPerAddr) }},
	{"ping-interval", "TAVERN_PING_INTERVAL", "a websocket whose peer answers no ping for this long is closed", func(c *Config) flag.Value { return (*durationValue)(&c.PingInterval) }},
	{"", "OPENAI_API_KEY", "key of an OpenAI-compatible server; with it or OPENAI_BASE_URL the models play the DM, else the offline narrator does", func(c *Config) flag.Value { return (*stringValue)(&c.OpenAIKey) }},
	{"openai-base-url", "OPENAI_BASE_URL", "base URL of an OpenAI-compatible server, with its /v1 (empty: OpenAI's)", func(c *Config) flag.Value { return (*stringValue)(&c.OpenAIBaseURL) }},
	{"model", "TAVERN_MODEL", "model of every agent unless overridden below", func(c *Config) flag.Value { return (*stringValue)(&c.Model) }},
	{"model-narrative", "TAVERN_MODEL_NARRATIVE", "model of the narrative agent (empty: -model)", func(c *Config) flag.Value { return (*stringValue)(&c.ModelNarrative) }},
	{"model-combat", "TAVERN_MODEL_COMBAT", "model of the combat agent (empty: -model)", func(c *Config) flag.Value { return (*stringValue)(&c.ModelCombat) }},
	{"model-summary", "TAVERN_MODEL_SUMMARY", "model that summarises archived history (empty: -model)", func(c *Config) flag.Value { return (*stringValue)(&c.ModelSummary) }},
	{"model-data", "TAVERN_MODEL_DATA", "model of the operator's data agent (empty: -model)", func(c *Config) flag.Value { return (*stringValue)(&c.ModelData) }},
	{"model-streaming", "TAVERN_MODEL_STREAMING", "auto, on or off: stream model calls; auto stops streaming calls with tools once the server shows it sends tool calls only without streaming", func(c *Config) flag.Value { return (*stringValue)(&c.Streaming) }},
	{"llm-timeout", "TAVERN_LLM_TIMEOUT", "bound on one model call, retries apart", func(c *Config) flag.Value { return (*durationValue)(&c.LLMTimeout) }},
	{"llm-first-token-timeout", "TAVERN_LLM_FIRST_TOKEN_TIMEOUT", "wait for a call's first streamed chunk before retrying it; a turn that has streamed nothing by then is told to the table as slow", func(c *Config) flag.Value { return (*durationValue)(&c.LLMFirstToken) }},
	{"llm-attempt-deadline", "TAVERN_LLM_ATTEMPT_DEADLINE", "bound on one attempt at a turn, its model calls and retries together; an action is given up after 3 attempts (within 90 s at the defaults)", func(c *Config) flag.Value { return (*durationValue)(&c.LLMAttempt) }},
	{"llm-idle-timeout", "TAVERN_LLM_IDLE_TIMEOUT", "wait between two streamed chunks before retrying the call", func(c *Config) flag.Value { return (*durationValue)(&c.LLMIdle) }},
	{"history-min-messages", "TAVERN_HISTORY_MIN_MESSAGES", "messages of recent history each agent keeps when it archives older turns: whole turns, so a few more; 3 (one turn) at least", func(c *Config) flag.Value { return (*intValue)(&c.HistoryMin) }},
	{"history-max-messages", "TAVERN_HISTORY_MAX_MESSAGES", "messages of recent history that make an agent archive its oldest turns into a memory; -history-min-messages at least", func(c *Config) flag.Value { return (*intValue)(&c.HistoryMax) }},
	{"history-tokens", "TAVERN_HISTORY_TOKENS", "estimated tokens of recent history that make an agent archive, as above (its newest turn is always kept)", func(c *Config) flag.Value { return (*intValue)(&c.HistoryTokens) }},
	{"history-summaries", "TAVERN_HISTORY_SUMMARIES", "memory summaries each agent sees before its recent history", func(c *Config) flag.Value { return (*intValue)(&c.HistorySummaries) }},
	{"prices", "TAVERN_PRICES", "extra model prices in USD per million tokens, model=input/cached/output[,…], for the call log's costs", func(c *Config) flag.Value { return (*stringValue)(&c.Prices) }},
	{"alert-model-error-rate", "TAVERN_ALERT_MODEL_ERROR_RATE", "alert when this share of a model's calls failed over 5 minutes (5 calls at least; 0: off)", func(c *Config) flag.Value { return (*floatValue)(&c.AlertModelErrorRate) }},
	{"alert-model-p95", "TAVERN_ALERT_MODEL_P95", "alert when a model's 95th-percentile latency over 5 minutes reaches this (0: off)", func(c *Config) flag.Value { return (*durationValue)(&c.AlertModelP95) }},
	{"alert-spend-hour-usd", "TAVERN_ALERT_SPEND_HOUR_USD", "alert when the models cost this much USD over the last hour (0: off)", func(c *Config) flag.Value { return (*floatValue)(&c.AlertSpendHourUSD) }},
	{"alert-action-wait", "TAVERN_ALERT_ACTION_WAIT", "alert when a player's acknowledged action has waited this long (0: off)", func(c *Config) flag.Value { return (*durationValue)(&c.AlertActionWait) }},
	{"alert-commit-p95", "TAVERN_ALERT_COMMIT_P95", "alert when the store's 95th-percentile commit latency over 5 minutes reaches this (0: off)", func(c *Config) flag.Value { return (*durationValue)(&c.AlertCommitP95) }},
	{"alert-every", "TAVERN_ALERT_EVERY", "how often the alert rules run (the alert history is kept in the store)", func(c *Config) flag.Value { return (*durationValue)(&c.AlertEvery) }},
	{"budget-day-usd", "TAVERN_BUDGET_DAY_USD", "the models' daily budget in USD over every table (0: none); past it, or past a table's own budget set on the console, a table is played by the offline narrator until midnight UTC", func(c *Config) flag.Value { return (*floatValue)(&c.BudgetDayUSD) }},
}

// FromEnv sets every setting whose variable getenv returns non-empty. It
// names the variable of a value it cannot parse.
func (c *Config) FromEnv(getenv func(string) string) error {
	for _, s := range settings {
		if v := getenv(s.Env); v != "" {
			if err := s.value(c).Set(v); err != nil {
				return fmt.Errorf("%s=%q: %w", s.Env, v, err)
			}
		}
	}
	return nil
}

// Flags defines a flag on fs for every setting that has one, writing into
// c, and sets fs.Usage to print every setting (Usage). Call FromEnv first:
// a flag given on the command line wins over the environment.
func (c *Config) Flags(fs *flag.FlagSet) {
	for _, s := range settings {
		if s.Flag != "" {
			fs.Var(s.value(c), s.Flag, s.Usage+" (env "+s.Env+")")
		}
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
		Usage(fs.Output())
	}
}

// Usage writes every setting: its flag, its variable, its default and
// what it does.
func Usage(w io.Writer) {
	def := DefaultConfig()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  flag\tenvironment\tdefault\twhat")
	for _, s := range settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", flagName(s), s.Env, defaultOf(s, &def), s.Usage)
	}
	tw.Flush()
}

// flagName is the setting's flag as typed, or a note that it has none.
func flagName(s setting) string {
	if s.Flag == "" {
		return "(env only)"
	}
	return "-" + s.Flag
}

// defaultOf is the setting's default as Usage and the README show it.
func defaultOf(s setting, def *Config) string {
	if v := s.value(def).String(); v != "" {
		return v
	}
	return `""`
}

// check refuses values the flags' parsers accept but Tavern cannot use.
func (c *Config) check() error {
	switch {
	case c.EvictAfter < 0:
		return fmt.Errorf("evict-after %s: want 0 (never) or more", c.EvictAfter)
	case c.QuotaPlayers < 1 || c.QuotaTables < 1:
		return fmt.Errorf("quota-players %d, quota-tables %d: want 1 or more (-quotas off lifts them)", c.QuotaPlayers, c.QuotaTables)
	case c.SocketsPerPlayer < 1 || c.SocketsPerAddr < 1:
		return fmt.Errorf("sockets-per-player %d, sockets-per-addr %d: want 1 or more", c.SocketsPerPlayer, c.SocketsPerAddr)
	case c.PingInterval < time.Second:
		return fmt.Errorf("ping-interval %s: want 1s or more, such as 60s", c.PingInterval)
	case c.Streaming != openai.StreamAuto && c.Streaming != openai.StreamOn && c.Streaming != openai.StreamOff:
		return fmt.Errorf("model streaming %q: want auto, on or off", c.Streaming)
	case c.LLMTimeout <= 0 || c.LLMFirstToken <= 0 || c.LLMIdle <= 0 || c.LLMAttempt <= 0:
		return fmt.Errorf("llm timeouts %s, %s, %s, %s: want durations above 0, such as 60s", c.LLMTimeout, c.LLMFirstToken, c.LLMIdle, c.LLMAttempt)
	case c.HistoryMin < agent.TurnMessages:
		return fmt.Errorf("history-min-messages %d (TAVERN_HISTORY_MIN_MESSAGES): a window smaller than one turn's %d messages (the player's, the DM's output call, its result) cannot hold the turn being played; want %d or more",
			c.HistoryMin, agent.TurnMessages, agent.TurnMessages)
	case c.HistoryMax < c.HistoryMin:
		return fmt.Errorf("history-max-messages %d (TAVERN_HISTORY_MAX_MESSAGES) is below history-min-messages %d: want it at least as large", c.HistoryMax, c.HistoryMin)
	case c.HistoryTokens < 1:
		return fmt.Errorf("history-tokens %d (TAVERN_HISTORY_TOKENS): want 1 or more", c.HistoryTokens)
	case c.HistorySummaries < 1:
		return fmt.Errorf("history-summaries %d (TAVERN_HISTORY_SUMMARIES): want 1 or more", c.HistorySummaries)
	}
	if err := c.checkCluster(); err != nil {
		return err
	}
	if c.AlertEvery < time.Second {
		return fmt.Errorf("alert-every %s: want 1s or more", c.AlertEvery)
	}
	if c.BudgetDayUSD < 0 {
		return fmt.Errorf("budget-day-usd %g: want 0 (none) or more", c.BudgetDayUSD)
	}
	if _, err := agent.ParsePrices(c.Prices); c.Prices != "" && err != nil {
		return fmt.Errorf("prices: %w", err)
	}
	return nil
}

// env answers openai.ModelsFromEnv from the settings, so the choice of
// models has one reading of them.
func (c *Config) env(name string) string {
	for _, s := range settings {
		if s.Env == name {
			return s.value(c).String()
		}
	}
	return ""
}

type stringValue string

func (v *stringValue) String() string     { return string(*v) }
func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }

type intValue int

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	*v = intValue(n)
	return nil
}

type floatValue float64

func (v *floatValue) String() string { return strconv.FormatFloat(float64(*v), 'f', -1, 64) }
func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f {
		return fmt.Errorf("want a number such as 2.5")
	}
	*v = floatValue(f)
	return nil
}

type durationValue time.Duration

// String trims the zero units: 10m, not 10m0s.
func (v *durationValue) String() string {
	s := time.Duration(*v).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 10m or 60s")
	}
	*v = durationValue(d)
	return nil
}

type onOffValue bool

func (v *onOffValue) String() string {
	if *v {
		return "on"
	}
	return "off"
}
func (v *onOffValue) Set(s string) error {
	switch strings.ToLower(s) {
	case "on":
		*v = true
	case "off":
		*v = false
	default:
		return fmt.Errorf("want on or off")
	}
	return nil
}

type levelValue slog.Level

func (v *levelValue) String() string { return strings.ToLower(slog.Level(*v).String()) }
func (v *levelValue) Set(s string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("want debug, info, warn or error")
	}
	*v = levelValue(l)
	return nil
}
