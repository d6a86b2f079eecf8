package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/orderlab/orderlab/services/internal/order"
)

// MaxBodyBytes bounds request bodies: 100 items fit well inside it.
const MaxBodyBytes = 64 << 10

// readJSONBody reads r's body. It insists on a JSON content type (UTF-8,
// the only charset JSON has) and a body within MaxBodyBytes (w is told to
// close the connection past it); a failure is a 415, a 413 or a 400.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		err = errors.New("charset is not UTF-8")
	}
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, unsupportedMediaType(ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, bodyTooLarge()
		}
		return nil, invalid("body", "could not be read: "+err.Error())
	}
	return body, nil
}

// decodeJSON decodes body into v: known fields only, a single JSON value.
// A failure is a 400 that names the field.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid(describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("body", "must hold exactly one JSON value, with nothing after it")
	}
	return nil
}

// orderJSON is an order as sent: the items stay raw so that each can be
// decoded on its own and a problem in one can name it (items[3].quantity).
type orderJSON struct {
	CustomerID string            `json:"customer_id"`
	Items      []json.RawMessage `json:"items"`
}

// decodeOrder reads an order.Input from r's body; every problem is a 400
// that names the field, including the item's index (or the 415 and 413 of
// readJSONBody).
func decodeOrder(w http.ResponseWriter, r *http.Request) (order.Input, error) {
	body, err := readJSONBody(w, r)
	if err != nil {
		return order.Input{}, err
	}
	return decodeOrderBody(body)
}

// decodeOrderBody decodes and checks the text of an order's body: what
// it decodes to is exactly what was sent (checkOrderText).
func decodeOrderBody(body []byte) (order.Input, error) {
	if field, detail, bad := checkOrderText(body); bad {
		return order.Input{}, invalid(field, detail)
	}
	var raw orderJSON
	if err := decodeJSON(body, &raw); err != nil {
		return order.Input{}, err
	}
	in := order.Input{CustomerID: raw.CustomerID}
	if raw.Items != nil {
		in.Items = make([]order.Item, len(raw.Items))
	}
	for i, b := range raw.Items {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in.Items[i]); err != nil {
			field, detail := describeJSONError(err)
			prefix := fmt.Sprintf("items[%d]", i)
			if field == "body" {
				field = prefix
			} else {
				field = prefix + "." + field
			}
			return order.Input{}, invalid(field, detail)
		}
	}
	return in, nil
}

// describeJSONError turns encoding/json's errors into a field and a message
// a client can act on.
func describeJSONError(err error) (field, detail string) {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return "body", fmt.Sprintf("malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.As(err, &typ):
		f := typ.Field
		if f == "" {
			f = "body"
		}
		return f, fmt.Sprintf("must be %s, got JSON %s", jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.EOF):
		return "body", "is empty: want a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "body", "malformed JSON: unexpected end"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if name == "" {
			return "body", "holds a field with an empty name"
		}
		return name, "is not a known field"
	default:
		return "body", err.Error()
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int32", "int64":
		return "an integer"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct":
		return "an object"
	default:
		return goKind
	}
}
