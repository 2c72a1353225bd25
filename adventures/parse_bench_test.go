package adventures

import "testing"

// BenchmarkParseStarter is the cost of one check of the editor's starter
// (POST /api/adventures/validate runs one per pause in typing): 0.7 ms at
// load average 18 on 2 cores.
func BenchmarkParseStarter(b *testing.B) {
	lib, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, p := Parse(Starter(), lib.Catalogue); len(p) > 0 {
			b.Fatal(p)
		}
	}
}
