// Command server runs Tavern: one binary, one SQLite file. Every setting is
// a flag and an environment variable (tavern -h); internal/tavern does the
// wiring. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"tavern/internal/pgdb"
	"tavern/internal/tavern"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tavern:", err)
		os.Exit(1)
	}
}

// run serves Tavern until ctx ends, then shuts it down. The environment
// comes only through getenv; the flags win over it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := tavern.DefaultConfig()
	if err := cfg.FromEnv(getenv); err != nil {
		return err
	}
	fs := flag.NewFlagSet("tavern", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.Flags(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (settings are flags: tavern -h)", fs.Arg(0))
	}
	cfg.LogOutput = stderr
	t, err := tavern.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer t.Close() // on early returns; Close is safe to call twice
	if err := t.Listen(); err != nil {
		return err
	}
	database := cfg.DB
	if pgdb.IsURL(database) {
		database = "PostgreSQL " + pgdb.Where(database) // never its password
	}
	opened := func() {
		fmt.Fprintf(stdout, "Tavern is open: %s/ (DM: %s, database: %s)\n", t.URL(), t.DM, database)
	}
	select {
	case <-t.Ready():
		opened()
	default:
		fmt.Fprintf(stdout, "Tavern is listening at %s/ and serves once its database (%s) is reachable\n", t.URL(), database)
	}
	if t.AdminTokenMade {
		fmt.Fprintf(stdout, "Admin: %s/admin?token=%s\n", t.URL(), t.AdminToken)
	} else {
		fmt.Fprintf(stdout, "Admin: %s/admin (token: TAVERN_ADMIN_TOKEN)\n", t.URL())
	}
	select {
	case <-t.Ready():
	default:
		// Said again once it serves, for whoever waits for the line.
		go func() {
			select {
			case <-t.Ready():
				opened()
			case <-ctx.Done():
			}
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- t.Serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	t.Log.Info("shutting down")
	err = t.Close()
	if serr := <-errc; err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	t.Log.Info("stopped")
	return nil
}
