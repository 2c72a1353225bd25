package engine

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// Roll is the record of one die roll, as it appears in a `dice` event.
type Roll struct {
	Roller   string `json:"roller"`
	Purpose  string `json:"purpose"`
	Notation string `json:"notation"`
	Rolls    []int  `json:"rolls"`
	Modifier int    `json:"modifier"`
	Total    int    `json:"total"`
	// Kept is the die that counts when a roll keeps one of several
	// (advantage: "2d20kh1", disadvantage: "2d20kl1"); 0 otherwise. Total
	// is always the kept dice plus Modifier.
	Kept int `json:"kept,omitempty"`
	// Against and Outcome are set on an attack roll once it is resolved:
	// the target's defence roll total (d100) or armour class (d20), and
	// "hit", "miss", "crit" or "fumble".
	Against int    `json:"against,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// Natural is the sum of the dice without the modifier.
func (r Roll) Natural() int { return r.Total - r.Modifier }

// RNGState is the persisted state of a table's random source: the seed it
// started from, how many numbers it has drawn, and the generator's exact
// state, so a reload continues the same sequence.
type RNGState struct {
	Seed  uint64 `json:"seed"`
	Draws int64  `json:"draws"`
	PCG   []byte `json:"pcg,omitempty"`
}

// Dice is a table's seeded random source. Every die in the game is rolled
// here; each roll is appended to Log. Not safe for concurrent use.
type Dice struct {
	pcg   *rand.PCG
	rng   *rand.Rand
	seed  uint64
	draws int64
	// script, when set, supplies die results instead of the generator.
	script []int
	// Log collects every roll made since the last TakeLog.
	Log []Roll
}

// NewDice returns dice seeded with seed.
func NewDice(seed uint64) *Dice {
	pcg := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	return &Dice{pcg: pcg, rng: rand.New(pcg), seed: seed}
}

// RestoreDice returns dice continuing from a saved state.
func RestoreDice(s RNGState) (*Dice, error) {
	d := NewDice(s.Seed)
	if len(s.PCG) > 0 {
		if err := d.pcg.UnmarshalBinary(s.PCG); err != nil {
			return nil, fmt.Errorf("restore dice: %w", err)
		}
	}
	d.draws = s.Draws
	return d, nil
}

// State returns the dice's current state for persistence.
func (d *Dice) State() RNGState {
	b, _ := d.pcg.MarshalBinary() // PCG.MarshalBinary never fails.
	return RNGState{Seed: d.seed, Draws: d.draws, PCG: b}
}

// Intn returns a uniform number in [0, n). Used for non-rule choices that
// must still be reproducible (e.g. which of two equal targets an NPC picks).
func (d *Dice) Intn(n int) int {
	d.draws++
	if d.script != nil {
		if len(d.script) == 0 {
			panic("engine: scripted dice exhausted")
		}
		v := d.script[0]
		d.script = d.script[1:]
		if v < 1 || v > n {
			panic(fmt.Sprintf("engine: scripted die %d out of 1..%d", v, n))
		}
		return v - 1
	}
	return d.rng.IntN(n)
}

// ScriptedDice returns dice whose successive die results are values (each
// in 1..sides of the die rolled). For tests of exact rule outcomes.
func ScriptedDice(values ...int) *Dice {
	d := NewDice(0)
	d.script = append([]int{}, values...)
	return d
}

// Remaining reports how many scripted values are left.
func (d *Dice) Remaining() int { return len(d.script) }

// Uint64 returns a random 64-bit number (IDs, seeds).
func (d *Dice) Uint64() uint64 {
	d.draws++
	return d.rng.Uint64()
}

// Die rolls one die with the given number of sides.
func (d *Dice) Die(sides int) int { return d.Intn(sides) + 1 }

// Roll rolls n dice of the given sides plus mod, records and returns it.
func (d *Dice) Roll(roller, purpose string, n, sides, mod int) Roll {
	r := Roll{Roller: roller, Purpose: purpose, Notation: Notation(n, sides, mod), Modifier: mod}
	for range n {
		v := d.Die(sides)
		r.Rolls = append(r.Rolls, v)
		r.Total += v
	}
	r.Total += mod
	d.Log = append(d.Log, r)
	return r
}

// RollKeep rolls n dice of sides and keeps the highest (high) or the
// lowest one, plus mod: advantage and disadvantage. The notation is the
// keep notation "2d20kh1+5" / "2d20kl1+5", so that the record reads right:
// Total is the kept die plus mod.
func (d *Dice) RollKeep(roller, purpose string, n, sides, mod int, high bool) Roll {
	keep := "kl1"
	if high {
		keep = "kh1"
	}
	r := Roll{Roller: roller, Purpose: purpose, Notation: KeepNotation(n, sides, keep, mod), Modifier: mod}
	for range n {
		v := d.Die(sides)
		r.Rolls = append(r.Rolls, v)
		if r.Kept == 0 || (high && v > r.Kept) || (!high && v < r.Kept) {
			r.Kept = v
		}
	}
	r.Total = r.Kept + mod
	d.Log = append(d.Log, r)
	return r
}

// annotate sets the target number and the outcome on the last logged roll
// (an attack's roll, once the attack is resolved).
func (d *Dice) annotate(r *Roll, against int, outcome string) {
	r.Against, r.Outcome = against, outcome
	for i := len(d.Log) - 1; i >= 0; i-- {
		l := &d.Log[i]
		if l.Roller == r.Roller && l.Purpose == r.Purpose && l.Total == r.Total && l.Outcome == "" {
			l.Against, l.Outcome = against, outcome
			return
		}
	}
}

// RollNotation rolls a notation such as "2d6+3".
func (d *Dice) RollNotation(roller, purpose, notation string) (Roll, error) {
	n, sides, mod, err := ParseNotation(notation)
	if err != nil {
		return Roll{}, err
	}
	return d.Roll(roller, purpose, n, sides, mod), nil
}

// TakeLog returns the rolls recorded so far and clears the log.
func (d *Dice) TakeLog() []Roll {
	l := d.Log
	d.Log = nil
	return l
}

// Notation formats n dice of sides plus mod: "1d100+2", "2d6", "1d20-1".
func Notation(n, sides, mod int) string {
	s := fmt.Sprintf("%dd%d", n, sides)
	switch {
	case mod > 0:
		s += "+" + strconv.Itoa(mod)
	case mod < 0:
		s += strconv.Itoa(mod)
	}
	return s
}

// KeepNotation formats a keep roll: "2d20kh1+5", "2d20kl1-1".
func KeepNotation(n, sides int, keep string, mod int) string {
	return Notation(n, sides, 0) + keep + strings.TrimPrefix(Notation(1, 1, mod), "1d1")
}

var notationRE = regexp.MustCompile(`^(\d{1,2})d(\d{1,3})([+-]\d{1,3})?$`)

// ParseNotation parses "NdS", "NdS+M" or "NdS-M".
func ParseNotation(s string) (n, sides, mod int, err error) {
	m := notationRE.FindStringSubmatch(strings.ReplaceAll(strings.ToLower(s), " ", ""))
	if m == nil {
		return 0, 0, 0, Errorf(EINVALID, "bad dice notation %q (want e.g. 2d6+1)", s)
	}
	n, _ = strconv.Atoi(m[1])
	sides, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		mod, _ = strconv.Atoi(m[3])
	}
	if n < 1 || sides < 2 {
		return 0, 0, 0, Errorf(EINVALID, "bad dice notation %q", s)
	}
	return n, sides, mod, nil
}

// SeedFrom derives a seed from bytes (e.g. a table id) with FNV-1a.
func SeedFrom(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], h)
	return binary.LittleEndian.Uint64(buf[:])
}
