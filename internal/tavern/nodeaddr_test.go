package tavern

import (
	"strings"
	"testing"
)

// TestLoopbackNodeAddr: a node whose database is on another host must not
// advertise the default loopback address, or every node would pass its
// requests to itself; an explicit node address, or a database on this
// host (several nodes on one machine), is accepted.
func TestLoopbackNodeAddr(t *testing.T) {
	remote := "postgres://tavern@db.example:5432/tavern"
	cases := []struct {
		name   string
		env    []string
		refuse bool
	}{
		{"default addr, remote database", []string{"TAVERN_DB", remote}, true},
		{"localhost, remote database", []string{"TAVERN_DB", remote, "TAVERN_ADDR", "localhost:8080"}, true},
		{"explicit node addr", []string{"TAVERN_DB", remote, "TAVERN_NODE_ADDR", "10.0.0.5:8080"}, false},
		{"routable addr", []string{"TAVERN_DB", remote, "TAVERN_ADDR", "10.0.0.5:8080"}, false},
		{"database on this host", []string{"TAVERN_DB", "postgres://tavern@127.0.0.1:5432/tavern"}, false},
		{"database on a unix socket", []string{"TAVERN_DB", "postgres:///tavern?host=/run/postgresql"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(envOf(append(c.env, "TAVERN_CLUSTER_TOKEN", "x")...))
			if c.refuse && (err == nil || !strings.Contains(err.Error(), "TAVERN_NODE_ADDR")) {
				t.Errorf("err %v, want a refusal naming TAVERN_NODE_ADDR", err)
			}
			if !c.refuse && err != nil {
				t.Errorf("err %v, want none", err)
			}
		})
	}
}
