package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// lines is an io.Writer that hands each written chunk to a channel.
type lines struct {
	mu sync.Mutex
	ch chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.ch <- string(p):
	default:
	}
	return len(p), nil
}

// TestRunPrintsAdminURL: without TAVERN_ADMIN_TOKEN the server makes a
// token and prints the admin URL once; that URL signs in.
func TestRunPrintsAdminURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &lines{ch: make(chan string, 16)}
	env := map[string]string{"TAVERN_DB": filepath.Join(t.TempDir(), "t.db")}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-log-level", "error"}, func(k string) string { return env[k] }, out, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	re := regexp.MustCompile(`Admin: (http://\S+/admin\?token=(\S+))`)
	var url, tok string
	for url == "" {
		select {
		case s := <-out.ch:
			if m := re.FindStringSubmatch(s); m != nil {
				url, tok = m[1], m[2]
			}
		case err := <-done:
			t.Fatalf("run ended: %v", err)
		}
	}
	if len(tok) < 20 {
		t.Errorf("admin token %q is too short", tok)
	}
	jar, _ := cookiejar.New(nil)
	res, err := (&http.Client{Jar: jar}).Get(url) // follows the redirect with the cookie
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Request.URL.Path != "/admin" || strings.Contains(res.Request.URL.RawQuery, "token") {
		t.Errorf("GET %s ended at %s with %d", url, res.Request.URL, res.StatusCode)
	}
	req, _ := http.NewRequest("GET", strings.Replace(url, "/admin?token="+tok, "/metrics", 1), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("/metrics with the printed token: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}
