package scenario

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestScenarioFormatPageNamesEveryField holds docs/reference/scenario-format.md
// to the types a scenario file decodes into: every YAML field is named on
// the page (as `field`, or `parent.field` for the cluster's), and every
// field the page's tables list exists.
func TestScenarioFormatPageNamesEveryField(t *testing.T) {
	data, err := os.ReadFile("../../docs/reference/scenario-format.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	fields := map[string]bool{}
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeOf(Scenario{}).PkgPath() {
			return
		}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[prefix+name] = true
			switch name {
			case "cluster", "role", "pgbouncer":
				if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct && typ != reflect.TypeOf(Phase{}) {
					walk(f.Type, prefix+name+".")
					continue
				}
			}
			walk(f.Type, "")
		}
	}
	walk(reflect.TypeOf(Scenario{}), "")
	for f := range fields {
		if !strings.Contains(page, "`"+f+"`") && !strings.Contains(page, "`"+f+"` ") {
			t.Errorf("docs/reference/scenario-format.md does not name the field %s", f)
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_.]+)`(?:, `([a-z_.]+)`)? \\|")
	for _, m := range row.FindAllStringSubmatch(page, -1) {
		for _, name := range m[1:] {
			if name != "" && !fields[name] {
				t.Errorf("docs/reference/scenario-format.md lists %s, which no scenario type has", name)
			}
		}
	}
}
