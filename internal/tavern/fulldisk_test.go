package tavern

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
)

// wsFrame is what this test reads of a frame.
type wsFrame struct {
	Type, ID, Code, Message, Kind string
}

// The JSON names of wsFrame's fields.
func (f *wsFrame) UnmarshalJSON(b []byte) error {
	var v struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Kind    string `json:"kind"`
	}
	err := json.Unmarshal(b, &v)
	*f = wsFrame{v.Type, v.ID, v.Code, v.Message, v.Kind}
	return err
}

// TestFullDisk plays a table on a real file system that fills up (a 2 MiB
// tmpfs, most of it taken by a file), then frees it: acts are answered
// `unavailable`, /readyz answers 503 with the reason, and once the file
// is deleted play goes on by itself, every acked act kept. It needs to
// mount a tmpfs (root); elsewhere the store's own test of a full file
// (internal/db, internal/hub: TestFullStore…) stands in.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): the full disk is tried by TestFullStoreUnderPlay instead", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.DB, cfg.EvictAfter = filepath.Join(dir, "t.db"), 0
	tv, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tv.Close()
	go tv.Serve()
	if err := tv.Listen(); err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(tv.URL()+"/api/players", "application/json", strings.NewReader(`{"name": "Ana"}`))
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		PlayerID string `json:"player_id"`
		Token    string `json:"token"`
	}
	err = json.NewDecoder(res.Body).Decode(&made)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := engine.Player{ID: made.PlayerID, Name: "Ana"}
	ts, err := tv.Hub.CreateTable(ctx, p, hub.TableSpec{Name: "Full disk"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tv.Hub.Sit(ctx, ts.ID, p, engine.NewCharacterSpec{Name: "Ana", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(tv.URL(), "http", "ws", 1) + "/ws/tables/" + ts.ID + "?role=player&token=" + made.Token
	conn, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	if err != nil {
		var body []byte
		if res != nil {
			body, _ = io.ReadAll(res.Body)
		}
		t.Fatalf("dial: %v %s", err, body)
	}
	defer conn.Close(websocket.StatusNormalClosure, "")
	frames := make(chan wsFrame, 4096)
	go func() {
		defer close(frames)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var f wsFrame
			_ = json.Unmarshal(data, &f)
			frames <- f
		}
	}()
	next := func() wsFrame {
		t.Helper()
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("the socket closed")
			}
			return f
		case <-time.After(20 * time.Second):
			t.Fatal("no frame within 20 s")
		}
		return wsFrame{}
	}
	send := func(id string) {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"type": "act", "id": id, "text": "I look around the square"})
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	readyz := func() (int, string) {
		res, err := http.Get(tv.URL() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		buf := make([]byte, 512)
		n, _ := res.Body.Read(buf)
		return res.StatusCode, string(buf[:n])
	}

	// Take all but 256 KiB of the file system.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if free := int64(fs.Bavail) * fs.Bsize; free > 256<<10 {
		if err := os.WriteFile(filler, make([]byte, free-256<<10), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Play until the disk is full. An act whose commit waits for the disk
	// is answered only once it is durable: none may be acked meanwhile.
	acked, answered, codes := map[string]bool{}, map[string]bool{}, map[string]string{}
	sent, narrations := 0, 0
	read := func(f wsFrame) {
		switch {
		case f.Type == "event" && f.Kind == "narration":
			narrations++
		case f.Type == "ack":
			acked[f.ID], answered[f.ID] = true, true
		case f.Type == "error" && f.ID != "":
			if f.Code != hub.CodeUnavailable && f.Code != hub.CodeBusy {
				t.Fatalf("act %s on a filling disk = %s %q, want ack or unavailable (or busy: one waits already)", f.ID, f.Code, f.Message)
			}
			answered[f.ID], codes[f.ID] = true, f.Code
		}
	}
	for {
		if code, _ := readyz(); code == http.StatusServiceUnavailable {
			break
		}
		if sent == len(answered) {
			if sent == 500 {
				t.Fatal("500 acts did not fill the disk")
			}
			sent++
			send(fmt.Sprintf("a%d", sent))
		}
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("the socket closed")
			}
			read(f)
		case <-time.After(20 * time.Millisecond):
		}
	}
	ackedBefore := len(acked)
	code, body := readyz()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "full") {
		t.Errorf("/readyz on a full disk = %d %q, want 503 naming the full disk", code, body)
	}
	send("refused")
	for !answered["refused"] {
		read(next())
	}
	if codes["refused"] != hub.CodeUnavailable {
		t.Errorf("an act on a full disk = %q, want error unavailable", codes["refused"])
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if code, _ := readyz(); code == http.StatusOK {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz 10 s after the disk was freed = %d %q", code, body)
	}
	for sent+1 > len(answered) {
		read(next())
	}
	// The DM plays on: an act is taken (once the one before it, if it
	// waits, is played) and answered.
	for try := 0; !acked["after"]; try++ {
		if try > 0 {
			if codes["after"] != hub.CodeBusy || try == 10 {
				t.Fatalf("an act once the disk has room = %s", codes["after"])
			}
			for n := narrations; narrations == n; {
				read(next())
			}
			delete(answered, "after")
		}
		send("after")
		for !answered["after"] {
			read(next())
		}
	}
	for n := narrations; narrations == n; {
		read(next())
	}
	t.Logf("acts acked before the disk filled: %d, sent then: %d, acked in all: %d", ackedBefore, sent, len(acked))

	// The last TRUNCATE checkpoint copies the WAL into the file while
	// both exist, which a 2 MiB file system may not hold: the WAL keeps
	// every commit and the next open replays it, as the checks below show.
	if err := tv.Close(); err != nil && !strings.Contains(err.Error(), "full") {
		t.Fatal(err)
	}
	d, err := db.Open(ctx, cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for id := range acked {
		if _, ok, err := d.ActionByClientID(ctx, ts.ID, p.ID, id); err != nil || !ok {
			t.Errorf("acked act %s not in the file (%v)", id, err)
		}
	}
}
