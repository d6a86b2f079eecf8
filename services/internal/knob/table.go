package knob

import (
	"fmt"
	"strings"
)

// Row is k's row in the knobs table of docs/reference/knobs.md: variable,
// default, accepted values, models, live or why a restart, meaning.
func Row(k Knob) string {
	def := "unset"
	switch {
	case k.DefaultFrom != "":
		def = "`" + k.DefaultFrom + "`"
	case k.DefaultText != "":
		def = k.DefaultText
	case k.Default != "":
		def = "`" + k.Default + "`"
	}
	accepts := k.Range()
	if accepts != "" {
		accepts = "`" + accepts + "`"
		if k.Unit != "" {
			accepts += " " + k.Unit
		}
	}
	models := "all"
	if k.Models != nil {
		models = strings.Join(k.Models, ", ")
	}
	live := "live"
	if !k.Live {
		live = "restart: " + k.Restart
	}
	return fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s |", k.Name, def, accepts, models, live, k.Meaning)
}
