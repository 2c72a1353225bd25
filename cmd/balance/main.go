// Command balance measures how winnable the built-in fights are: for
// every encounter of every adventure (a location with hostile NPCs), both
// rulesets and every party of 1 to 4 level-1 characters (each mix of
// classes), it plays -fights seeded fights with the offline narrator as
// the DM and bots that use their abilities sensibly (balance.BotWords),
// and writes the win rates as Markdown (docs/balance.md; `make balance`).
//
// Runs are deterministic: fight i of a party uses seed i, whatever
// -workers is.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"

	"tavern/adventures"
	"tavern/internal/balance"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "balance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("balance", flag.ContinueOnError)
	fights := fs.Int("fights", 100, "fights per party, encounter and ruleset")
	out := fs.String("out", "", "write the Markdown table to this file (default: standard output)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "fights played at once")
	sizes := fs.String("sizes", "1,2,3,4", "party sizes to play")
	at := fs.String("at", "", "play only the encounters at these locations, comma-separated (e.g. tomb)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := balance.Options{Fights: *fights, Workers: *workers}
	if *at != "" {
		opts.Locations = strings.Split(*at, ",")
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-sizes: %q is not a whole number of characters (want e.g. 1,2,3,4)", s)
		}
		opts.Sizes = append(opts.Sizes, n)
	}
	lib, err := adventures.Load()
	if err != nil {
		return err
	}
	rep, err := balance.Run(ctx, lib, opts)
	if err != nil {
		return err
	}
	var b strings.Builder
	rep.Markdown(&b)
	if *out == "" {
		_, err := io.WriteString(stdout, b.String())
		return err
	}
	return os.WriteFile(*out, []byte(b.String()), 0o644)
}
