// Package engine holds Tavern's rules: the world, the game state, dice,
// initiative, the combat turn machine, rewards and levels.
//
// It is pure: no I/O, no clock, no logger and no global random source. Every
// die is rolled through a [Dice] seeded per table and returned as a [Roll]
// record, so fights can be audited and replayed. Start with [State], which is
// everything one table knows, then [Ruleset] and the combat functions in
// combat.go; abilities.go and rest.go hold what each class can do besides
// strike ([State.UseAbility]) and how a rest gives it back ([State.Rest]),
// encounter.go how a fight is fitted to the party. A State is not safe for concurrent use: the hub gives each table
// one owner goroutine and hands turn jobs a [State.Clone].
//
// Rules return the [Event] values players see. An event's data is one
// payload struct of its [Kind] (events.go), built once by a constructor and
// never changed; the example shows a fight's first blow and its events.
package engine
