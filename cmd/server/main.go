// Command server runs Tavern: one binary, one SQLite file. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/hub"
	"tavern/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tavern:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tavern", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr(getenv, "TAVERN_ADDR", "127.0.0.1:8080"), "listen address (env TAVERN_ADDR)")
	dbPath := fs.String("db", envOr(getenv, "TAVERN_DB", "data/tavern.db"), "SQLite file (env TAVERN_DB)")
	logLevel := fs.String("log-level", envOr(getenv, "TAVERN_LOG_LEVEL", "info"), "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("bad -log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	lib, err := adventures.Load()
	if err != nil {
		return fmt.Errorf("load adventures: %w", err)
	}
	store, err := db.Open(ctx, *dbPath)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()

	model, dmName := agent.Model(agent.Offline{}), "offline"
	if getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "" {
		log.Warn("OPENAI_API_KEY/OPENAI_BASE_URL set, but the OpenAI adapter is not built yet: running the offline narrator")
	}
	h := hub.New(hub.Config{
		Store: store, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: &agent.Runner{Narrative: model, Combat: model, Log: log},
		DM:     dmName, Log: log,
	})
	if err := h.Start(ctx); err != nil {
		return err
	}
	defer h.Close()

	srv := web.New(web.Config{Hub: h, Players: store, Log: log})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "Tavern is open: http://%s/ (DM: %s, database: %s)\n", ln.Addr(), dmName, *dbPath)
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// Close the hub first so websockets get 1001 and running turns finish
	// or roll back; then stop the HTTP server.
	_ = h.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
