package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestSmallLoadRunsClean(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-tables", "2", "-players", "2", "-spectators", "1", "-actions", "4", "-timeout", "60s"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "16 actions") || !strings.Contains(out.String(), "failures: 0") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestLoopbackOnly(t *testing.T) {
	for u, ok := range map[string]bool{"http://127.0.0.1:8080": true, "http://localhost:1": true, "http://[::1]:2": true,
		"http://10.0.0.5:8080": false, "http://example.com": false, "http://192.168.1.2": false} {
		if err := loopbackOnly(u); (err == nil) != ok {
			t.Errorf("loopbackOnly(%s) = %v", u, err)
		}
	}
	if err := run(context.Background(), []string{"-url", "http://10.1.2.3:80"}, &bytes.Buffer{}); err == nil {
		t.Error("a non-loopback target must be refused")
	}
}
