package web_test

import (
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
)

// TestAskPageShowsACutCell asks, through the page and the API, about a
// table whose name is 16 MiB: both answers carry the cut's marker, stay
// within the result's bound, and the server's heap stays far below the
// cell's size.
func TestAskPageShowsACutCell(t *testing.T) {
	e := newAskEnv(t, true)
	datasettest.MustSetBigName(t, e.path, 16<<20)
	// Reading 16 MiB under -race on a busy machine; no time is asserted.
	e.agent.Data.(*dataset.Dataset).Timeout = time.Minute
	query := func() {
		e.fake.Push(
			toolReply("query_data", map[string]any{"sql": "SELECT table_id, name FROM v_tables ORDER BY table_id", "description": "Table names"}),
			toolReply("answer", map[string]any{"text": "Three tables; t1's name is very long."}),
		)
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	before := heap()

	query()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/admin/ask", strings.NewReader(url.Values{"question": {"What are the tables called?"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	const marker = `<span class="ask-cut">…[cut: 16,777,216 bytes, showing 65,535]</span>`
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), marker) || len(page) > 2*dataset.MaxResultBytes {
		t.Errorf("page: %d, %d bytes, marker %v; want 200, at most %d bytes, %s", res.StatusCode, len(page), strings.Contains(string(page), marker), 2*dataset.MaxResultBytes, marker)
	}
	if !strings.Contains(string(page), `<td>Greyhollow B</td>`) {
		t.Error("page lacks the rows that were not cut")
	}

	query()
	api := e.post(t, `{"question": "What are the tables called?"}`, "")
	body, _ := io.ReadAll(api.Body)
	if api.StatusCode != http.StatusOK || !strings.Contains(string(body), `"marker":"…[cut: 16,777,216 bytes, showing 65,535]"`) || len(body) > dataset.MaxResultBytes {
		t.Errorf("API: %d, %d bytes; want 200, at most %d bytes, with the marker", api.StatusCode, len(body), dataset.MaxResultBytes)
	}

	// Generous: the cell whole would be 16 MiB, and more in copies.
	after := heap()
	grown := int64(after) - int64(before)
	t.Logf("heap in use: %d KiB before, %d KiB after two questions", before>>10, after>>10)
	if grown > 8<<20 {
		t.Errorf("heap grew by %d KiB; want far less than the 16 MiB cell", grown>>10)
	}
}
