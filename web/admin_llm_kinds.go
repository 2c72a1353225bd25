package web

import (
	"strconv"
	"strings"

	"tavern/internal/hub"
)

// errorKinds names a group's failed calls by kind, in the order of kinds,
// leaving out the kinds that did not happen ("" when none failed): one
// cell instead of a column per kind keeps the table within a desktop.
func errorKinds(g hub.LLMGroup, kinds []string) string {
	var parts []string
	for _, k := range kinds {
		if n := g.ErrorsByKind[k]; n > 0 {
			parts = append(parts, hub.ErrorKindLabel(k)+" "+strconv.Itoa(n))
		}
	}
	return strings.Join(parts, " · ")
}
