package adventures_test

import (
	"fmt"

	"tavern/adventures"
)

// Parse reports every mistake at once, each with its line, its path and
// how to fix it.
func ExampleParse() {
	src := `id: cellar
name: The Cellar
intro: Rats.
start: inn
locations:
  - id: inn
    name: The Inn
    exits:
      - {to: attic, name: the ladder}
npcs:
  - {id: hal, name: Hal, hp: 10}
`
	_, problems := adventures.Parse([]byte(src), nil)
	for _, p := range problems {
		fmt.Printf("line %d, %s: %s\n", p.Line, p.Path, p.Message)
	}
	// Output:
	// line 9, locations[0].exits[0].to: Exit to "attic", but no location has that id. Add a location with id "attic" or point the exit at one of: inn.
	// line 11, npcs[0]: hal is placed nowhere. Add "location: <location id>" with one of: inn.
}
