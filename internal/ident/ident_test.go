package ident

import (
	"encoding/base64"
	"regexp"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want *regexp.Regexp
	}{
		{"table id", New("t-"), regexp.MustCompile(`^t-[0-9a-f]{16}$`)},
		{"player id", New("p_"), regexp.MustCompile(`^p_[0-9a-f]{16}$`)},
		{"token", Token(), regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.want.MatchString(tc.got) {
				t.Errorf("%q does not match %s", tc.got, tc.want)
			}
		})
	}
	b, err := base64.RawURLEncoding.DecodeString(Token())
	if err != nil || len(b) != 32 {
		t.Errorf("token decodes to %d bytes (%v), want 32", len(b), err)
	}
}

func TestUnique(t *testing.T) {
	seen := map[string]bool{}
	seeds := map[uint64]bool{}
	for range 1000 {
		id, tok, seed := New("a-"), Token(), Seed()
		if seen[id] || seen[tok] || seeds[seed] {
			t.Fatalf("repeated value after %d draws", len(seeds))
		}
		seen[id], seen[tok], seeds[seed] = true, true, true
	}
}
