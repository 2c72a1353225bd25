package tavern

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestPprof(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, bad := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "example.com:6060", "nope"} {
		if _, stop, err := startPprof(bad, log); err == nil {
			stop()
			t.Errorf("%q accepted", bad)
		}
	}
	addr, stop, err := startPprof("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), "goroutine profile") {
		t.Errorf("GET goroutine profile: %s %.200s", res.Status, b)
	}
}
