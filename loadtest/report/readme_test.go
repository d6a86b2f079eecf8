package report

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestREADMEMarksOptionalFields checks the JSON example of loadtest/README.md
// against the types: every field written with omitempty must be marked
// optional there, and every field must appear.
func TestREADMEMarksOptionalFields(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "```jsonc")
	end := strings.Index(doc[start+1:], "```")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no jsonc example")
	}
	lines := strings.Split(doc[start:start+1+end], "\n")
	marked := func(name string) (present, optional bool) {
		for _, l := range lines {
			if strings.Contains(l, `"`+name+`":`) {
				present = true
				optional = optional || strings.Contains(l, "optional")
			}
		}
		return present, optional
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ == reflect.TypeFor[time.Time]() || typ == reflect.TypeFor[Latency]() {
			return // Latency objects are described in prose below the example
		}
		seen[typ] = true
		for f := range typ.Fields() {
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" {
				walk(f.Type)
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" || name == "-" {
				continue
			}
			present, optional := marked(name)
			switch {
			case !present:
				t.Errorf("%s.%s: %q is not in the README's JSON example", typ.Name(), f.Name, name)
			case strings.Contains(opts, "omitempty") && !optional:
				t.Errorf("%s.%s: %q is omitted when empty but not marked optional in the README", typ.Name(), f.Name, name)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Report]())
}
