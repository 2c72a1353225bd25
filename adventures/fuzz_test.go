package adventures

import (
	"strings"
	"testing"
)

// FuzzParse: no source makes Parse panic, and it returns an adventure or
// problems, each on a line of the source.
func FuzzParse(f *testing.F) {
	lib, err := Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	f.Add(string(Starter()))
	f.Add("id: [\n")
	f.Add("a: &a [*a, *a]\n")
	f.Fuzz(func(t *testing.T, src string) {
		a, problems := Parse([]byte(src), lib.Catalogue)
		if (a == nil) == (len(problems) == 0) {
			t.Fatalf("adventure %v with problems %v", a != nil, problems)
		}
		lines := strings.Count(src, "\n") + 2
		for _, p := range problems {
			if p.Line < 0 || p.Line > lines || p.Message == "" {
				t.Errorf("problem %+v for a source of %d lines", p, lines)
			}
		}
	})
}
