package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// encoding/json is lenient where the API must not be (docs/reference/api.md,
// Accepted input): it turns invalid UTF-8 and lone surrogate escapes
// ("\ud800") into U+FFFD, matches field names case-insensitively
// ("CUSTOMER_ID") and lets a repeated field overwrite the first. Each of
// these would store something other than what was sent, silently.
// checkOrderText walks the raw body before it is decoded and finds the
// first such problem, named by its field.

// orderFields are the field names of an order, and itemFields those of
// each of its items: exact, case and all.
var (
	orderFields = []string{"customer_id", "items"}
	itemFields  = []string{"sku", "quantity", "unit_price_cents"}
)

// frame is an open object or array while the body is walked.
type frame struct {
	path   string   // the field's name in a problem: "", "items", "items[2]"
	array  bool     // an array: values are named path[index]
	index  int      // the next element's index, in an array
	key    string   // the current field's name, in an object
	hasKey bool     // a name was read and its value is next, in an object
	fields []string // the names allowed, in an object; nil: any
	seen   map[string]bool
}

// child names the value about to be read in f.
func (f *frame) child() string {
	if f.array {
		return fmt.Sprintf("%s[%d]", f.path, f.index)
	}
	if f.path == "" {
		return f.key
	}
	return f.path + "." + f.key
}

// checkOrderText reports the first string in body that is not exactly
// what encoding/json would decode it to (invalid UTF-8, a lone surrogate
// escape), and the first field name that is unknown, repeated or empty,
// each with the field at fault. It leaves malformed JSON to the decoder:
// on a syntax error it stops and reports nothing.
func checkOrderText(body []byte) (field, detail string, bad bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*frame
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		end := dec.InputOffset()
		raw := body[prev:end]
		prev = end
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && !top.array && !top.hasKey && tok != json.Delim('}')
		name := "body"
		if top != nil && !isKey {
			name = top.child()
		}
		if _, ok := tok.(string); ok {
			if i := bytes.IndexByte(raw, '"'); i >= 0 {
				if problem := stringProblem(raw[i:]); problem != "" {
					if isKey {
						return fieldOr(top.path), "holds a field name that " + problem, true
					}
					return name, problem, true
				}
			}
		}
		if isKey {
			k := tok.(string)
			switch {
			case k == "":
				return fieldOr(top.path), "holds a field with an empty name", true
			case top.fields != nil && !contains(top.fields, k):
				top.key = k
				return top.child(), "is not a known field", true
			case top.seen[k]:
				top.key = k
				return top.child(), "is given twice", true
			}
			top.seen[k] = true
			top.key, top.hasKey = k, true
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			f := &frame{path: name, array: tok == json.Delim('['), seen: map[string]bool{}}
			switch {
			case len(stack) == 0 && !f.array:
				f.path, f.fields = "", orderFields
			case len(stack) == 2 && stack[1].path == "items" && stack[1].array && !f.array:
				f.fields = itemFields
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", "", false
			}
			top = stack[len(stack)-1]
		}
		// A value was read: advance its container.
		if top == nil {
			return "", "", false
		}
		if top.array {
			top.index++
		} else {
			top.hasKey = false
		}
	}
}

func fieldOr(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// stringProblem checks a raw JSON string literal, quotes included: its
// bytes must be valid UTF-8 (which rules out overlong forms and encoded
// surrogates) and every \u escape of a surrogate must be half of a pair.
// It returns what is wrong, or "".
func stringProblem(lit []byte) string {
	if !utf8.Valid(lit) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		i++
		if i >= len(lit) || lit[i] != 'u' {
			continue
		}
		r, ok := hex4(lit, i+1)
		if !ok {
			return "" // malformed: the decoder reports it
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return "holds a lone surrogate escape (\\u" + strconv.FormatInt(int64(r), 16) + ")"
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := -1, i+2 < len(lit) && lit[i+1] == '\\' && lit[i+2] == 'u'
			if ok {
				lo, ok = hex4(lit, i+3)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return "holds a lone surrogate escape (\\u" + strconv.FormatInt(int64(r), 16) + ")"
			}
			i += 6
		}
	}
	return ""
}

// hex4 reads the four hex digits at lit[i:].
func hex4(lit []byte, i int) (int, bool) {
	if i+4 > len(lit) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(lit[i:i+4]), 16, 32)
	return int(n), err == nil
}
