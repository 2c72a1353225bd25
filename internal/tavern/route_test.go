package tavern

import (
	"log/slog"
	"net/http"
	"testing"
)

func TestTableOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/tables/t-1":                 "t-1",
		"/api/tables/t-1/events":          "t-1",
		"/ws/tables/t-2":                  "t-2",
		"/tables/t-3":                     "t-3",
		"/admin/tables/t-4/pause":         "t-4",
		"/api/admin/tables/t-5/history/x": "t-5",
		"/api/tables":                     "",
		"/api/players":                    "",
		"/":                               "",
	} {
		if got := tableOf(path); got != want {
			t.Errorf("tableOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestHopHeaders: a node's signature is accepted and sets the client's
// address; a client's own hop headers, another token's, or a signature
// of another path are stripped and refused.
func TestHopHeaders(t *testing.T) {
	node := &router{token: []byte("secret"), log: slog.New(slog.DiscardHandler)}
	signed := func(by *router, path string) *http.Request {
		r, _ := http.NewRequest("GET", "http://node"+path, nil)
		by.sign(r, "192.0.2.7:1234")
		r.RemoteAddr = "10.0.0.2:5555"
		return r
	}
	r := signed(node, "/api/tables/t1")
	if !node.verify(r) || r.RemoteAddr != "192.0.2.7:1234" {
		t.Fatalf("a node's request: not verified, or remote %s", r.RemoteAddr)
	}
	if r.Header.Get(hopHeader) != "" || r.Header.Get(clientHeader) != "" {
		t.Errorf("hop headers left on the request")
	}
	for name, r := range map[string]*http.Request{
		"another token": signed(&router{token: []byte("guess")}, "/api/tables/t1"),
		"moved path": func() *http.Request {
			r := signed(node, "/api/tables/t1")
			r.URL.Path = "/api/tables/t2"
			return r
		}(),
		"forged client": func() *http.Request {
			r := signed(node, "/api/tables/t1")
			r.Header.Set(clientHeader, "203.0.113.9:1")
			return r
		}(),
	} {
		if node.verify(r) || r.RemoteAddr != "10.0.0.2:5555" {
			t.Errorf("%s: verified, remote %s", name, r.RemoteAddr)
		}
	}
}
