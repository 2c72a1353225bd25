// Command cluster runs Tavern on several nodes on this machine, for trying
// the cluster path (DESIGN.md "Beyond one machine"): a throwaway
// PostgreSQL cluster in ./data/pg (Debian's postgresql package; as root
// it runs as the postgres user), a database "tavern" in the C locale, and
// three tavern servers (bin/tavern, make build) on loopback ports 8081,
// 8082 and 8083, each a node. It prints their URLs and runs until
// interrupted, then stops the nodes (SIGTERM: they drain) and PostgreSQL.
// make cluster builds and runs it. README.md "Running several nodes" says
// how to do the same on real machines.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"tavern/internal/pgtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// run starts PostgreSQL and the nodes and returns once ctx ends (nil) or a
// node exits (its error: the cluster is no longer what it said it was),
// after stopping the others. getenv is unused: the nodes inherit the
// environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "data/pg", "PostgreSQL's directory (created if missing)")
	nodes := fs.Int("nodes", 3, "tavern nodes to start")
	port := fs.Int("port", 8081, "port of the first node; the others follow")
	bin := fs.String("bin", "bin/tavern", "the tavern binary (make build)")
	token := fs.String("admin-token", "cluster", "TAVERN_ADMIN_TOKEN of every node")
	if err := fs.Parse(args); err != nil {
		return err
	}

	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	pg, err := pgtest.Start(ctx, abs)
	if err != nil {
		return err
	}
	defer pg.Stop()
	url := pg.URL("tavern")
	if err := createDatabase(ctx, pg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "PostgreSQL: %s\n", url)

	logs := filepath.Join(filepath.Dir(abs), "cluster")
	if err := os.MkdirAll(logs, 0o750); err != nil {
		return err
	}
	var procs []*exec.Cmd
	exited := make(chan error, *nodes)
	running := 0 // nodes whose exit is not received yet
	defer func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM) // an error for one that exited
		}
		for ; running > 0; running-- {
			<-exited
		}
	}()
	// The nodes inherit this process's environment, with the cluster's
	// settings last.
	env := os.Environ()
	for i := range *nodes {
		addr := fmt.Sprintf("127.0.0.1:%d", *port+i)
		logf, err := os.Create(filepath.Join(logs, fmt.Sprintf("node%d.log", i+1)))
		if err != nil {
			return err
		}
		defer logf.Close()
		cmd := exec.Command(*bin, "-addr", addr)
		cmd.Env = append(env, "TAVERN_DB="+url, "TAVERN_CLUSTER_TOKEN=cluster-dev-token", "TAVERN_ADMIN_TOKEN="+*token)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", *bin, err)
		}
		procs = append(procs, cmd)
		running++
		go func() {
			err := cmd.Wait()
			if err == nil {
				err = errors.New("exited")
			}
			exited <- fmt.Errorf("node %d (pid %d, log %s): %w", i+1, cmd.Process.Pid, logf.Name(), err)
		}()
		fmt.Fprintf(stdout, "node %d: http://%s/  (admin: http://%s/admin?token=%s, log %s, pid %d)\n", i+1, addr, addr, *token, logf.Name(), cmd.Process.Pid)
	}
	fmt.Fprintln(stdout, "Every node serves every table. Ctrl-C stops the nodes and PostgreSQL.")
	select {
	case <-ctx.Done():
		return nil
	case err := <-exited:
		running--
		return err
	}
}

// createDatabase creates the database tavern in the C locale unless it
// exists.
func createDatabase(ctx context.Context, pg *pgtest.Cluster) error {
	_, err := pg.CreateDatabase(ctx, "tavern")
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P04" { // duplicate_database
		return nil
	}
	return err
}
