package balance

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"tavern/adventures"
	"tavern/internal/engine"
)

var classes = []string{"warrior", "rogue", "mage", "cleric"}

// Mixes lists the parties of size level-1 characters: each multiset of
// classes once, in class order.
func Mixes(size int) [][]string {
	var out [][]string
	var rec func(from int, cur []string)
	rec = func(from int, cur []string) {
		if len(cur) == size {
			out = append(out, append([]string(nil), cur...))
			return
		}
		for i := from; i < len(classes); i++ {
			rec(i, append(cur, classes[i]))
		}
	}
	rec(0, nil)
	return out
}

// Cell is the tally of one party against one encounter under one
// ruleset: fights played and won, rounds and the share of HP left summed.
type Cell struct {
	Fights, Won, Rounds int
	HPLeft              float64
}

// Rate is the share of fights won.
func (c Cell) Rate() float64 { return float64(c.Won) / float64(max(c.Fights, 1)) }

// Options say what Run plays.
type Options struct {
	// Fights is the number of seeded fights per party, encounter and
	// ruleset; fight i uses seed i.
	Fights int
	// Sizes are the party sizes played (1 to 4); each mix of classes of
	// each size is a party.
	Sizes []int
	// Workers is how many fights are played at once (at least 1).
	Workers int
	// Locations, if any, keep only the encounters at these locations
	// (to tune one fight without playing them all).
	Locations []string
}

// Report is what Run measured: Cells[encounter][party][ruleset].
type Report struct {
	Encounters []Encounter
	Parties    [][]string
	Rulesets   []string
	Cells      [][][]Cell
	Fights     int
}

// Run plays every party of opts.Sizes against every encounter of lib's
// adventures under both rulesets. The report is the same whatever
// opts.Workers is.
func Run(ctx context.Context, lib *adventures.Library, opts Options) (*Report, error) {
	var encs []Encounter
	for _, id := range lib.IDs() {
		a, _ := lib.Get(id)
		for _, e := range Encounters(a) {
			if len(opts.Locations) == 0 || slices.Contains(opts.Locations, e.Location) {
				encs = append(encs, e)
			}
		}
	}
	if len(encs) == 0 {
		return nil, fmt.Errorf("no encounter at %v", opts.Locations)
	}
	var parties [][]string
	for _, n := range opts.Sizes {
		if n < 1 || n > len(names) {
			return nil, fmt.Errorf("bad party size %d (1 to %d)", n, len(names))
		}
		parties = append(parties, Mixes(n)...)
	}
	rulesets := []string{engine.RulesetD100, engine.RulesetD20}
	type job struct{ e, p, r, seed int }
	type done struct {
		job
		res Result
		err error
	}
	cells := make([][][]Cell, len(encs))
	for i := range cells {
		cells[i] = make([][]Cell, len(parties))
		for j := range cells[i] {
			cells[i][j] = make([]Cell, len(rulesets))
		}
	}
	jobs := make(chan job)
	results := make(chan done)
	var wg sync.WaitGroup
	for range max(opts.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				res, err := PlayFight(lib.Catalogue, encs[j.e], rulesets[j.r], parties[j.p], uint64(j.seed))
				results <- done{j, res, err}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for e := range encs {
			for p := range parties {
				for r := range rulesets {
					for seed := range opts.Fights {
						select {
						case jobs <- job{e, p, r, seed}:
						case <-ctx.Done():
							return
						}
					}
				}
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	// Each fight's result is kept at its place and the sums are made in
	// that order, so that the report does not depend on which worker
	// finished first (float sums do).
	all := map[job]Result{}
	var firstErr error
	for d := range results {
		if d.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s, %v, %s, seed %d: %w", encs[d.e], parties[d.p], rulesets[d.r], d.seed, d.err)
			}
			continue
		}
		all[d.job] = d.res
	}
	for e := range encs {
		for p := range parties {
			for r := range rulesets {
				c := &cells[e][p][r]
				for seed := range opts.Fights {
					res, ok := all[job{e, p, r, seed}]
					if !ok {
						continue
					}
					c.Fights++
					c.Rounds += res.Rounds
					c.HPLeft += res.HPLeft
					if res.Won {
						c.Won++
					}
				}
			}
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Report{Encounters: encs, Parties: parties, Rulesets: rulesets, Cells: cells, Fights: opts.Fights}, nil
}

// BySize sums the cells of encounter e over the parties of each size,
// per ruleset: out[size][ruleset] (sizes not played are empty).
func (r *Report) BySize(e int) map[int][]Cell {
	out := map[int][]Cell{}
	for p, party := range r.Parties {
		sum := out[len(party)]
		if sum == nil {
			sum = make([]Cell, len(r.Rulesets))
			out[len(party)] = sum
		}
		for ri := range r.Rulesets {
			c := r.Cells[e][p][ri]
			sum[ri].Fights += c.Fights
			sum[ri].Won += c.Won
			sum[ri].Rounds += c.Rounds
			sum[ri].HPLeft += c.HPLeft
		}
	}
	return out
}

// Markdown writes the report: per encounter, the win rate by party size
// and ruleset, then every party mix.
func (r *Report) Markdown(w io.Writer) {
	encs, parties, rulesets, cells, fights := r.Encounters, r.Parties, r.Rulesets, r.Cells, r.Fights
	fmt.Fprintf(w, "# Balance\n\n")
	fmt.Fprintf(w, "How often a party of level-1 characters wins each built-in fight, measured by `make balance`\n")
	fmt.Fprintf(w, "(`go run ./cmd/balance`): %d seeded fights per party mix, encounter and ruleset, the offline\n", fights)
	fmt.Fprintf(w, "narrator playing the foes and bots playing the characters, using their abilities (heal and\n")
	fmt.Fprintf(w, "revive the fallen, bless and sleep first, spend magic missile and power attack, sneak attack\n")
	fmt.Fprintf(w, "a foe a friend fights). A win is `player_win` or `npc_flee`. The target: two level-1\n")
	fmt.Fprintf(w, "characters win 60–85 %% of the opening fight on each ruleset, and no party size wins every fight.\n")
	fmt.Fprintf(w, "The knobs: the foes of each adventure (HP, arms, abilities), how a fight is fitted to the party\n")
	fmt.Fprintf(w, "(`internal/engine/encounter.go`) and the abilities' dice and uses (`internal/engine/abilities.go`).\n")
	for e, enc := range encs {
		fmt.Fprintf(w, "\n## %s\n\n", enc)
		fmt.Fprintf(w, "| PCs |")
		for _, rs := range rulesets {
			fmt.Fprintf(w, " %s won | %s rounds | %s HP left |", rs, rs, rs)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|---|---|", len(rulesets)))
		bySize := r.BySize(e)
		for size := 1; size <= len(names); size++ {
			sum := bySize[size]
			if sum == nil {
				continue
			}
			fmt.Fprintf(w, "| %d |", size)
			for _, c := range sum {
				fmt.Fprintf(w, " %.0f %% | %.1f | %.0f %% |", 100*c.Rate(), float64(c.Rounds)/float64(max(c.Fights, 1)), 100*c.HPLeft/float64(max(c.Fights, 1)))
			}
			fmt.Fprintln(w)
		}
		var perfect []string
		for p, party := range parties {
			for ri, rs := range rulesets {
				if c := cells[e][p][ri]; c.Fights > 0 && c.Won == c.Fights {
					perfect = append(perfect, fmt.Sprintf("%s (%s)", strings.Join(party, ", "), rs))
				}
			}
		}
		fmt.Fprintf(w, "\nParty mixes that won every one of their %d fights: %d of %d", fights, len(perfect), len(parties)*len(rulesets))
		if len(perfect) > 0 && len(perfect) <= 12 {
			fmt.Fprintf(w, " (%s)", strings.Join(perfect, "; "))
		}
		fmt.Fprintf(w, ".\n")
		fmt.Fprintf(w, "\n| party |")
		for _, rs := range rulesets {
			fmt.Fprintf(w, " %s won |", rs)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(rulesets)))
		for p, party := range parties {
			fmt.Fprintf(w, "| %s |", strings.Join(party, ", "))
			for ri := range rulesets {
				fmt.Fprintf(w, " %.0f %% |", 100*cells[e][p][ri].Rate())
			}
			fmt.Fprintln(w)
		}
	}
}
