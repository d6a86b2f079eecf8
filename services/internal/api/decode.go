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

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/order"
)

// MaxBodyBytes bounds request bodies: 100 items fit well inside it.
const MaxBodyBytes = 64 << 10

// readJSONBody reads c's body. It insists on a JSON content type (UTF-8,
// the only charset JSON has) and a body within MaxBodyBytes; a failure is
// answered here with a problem, and false.
func readJSONBody(c *gin.Context) ([]byte, bool) {
	ct := c.GetHeader("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		err = errors.New("charset is not UTF-8")
	}
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		writeProblem(c, Problem{
			Type: problemBase + "unsupported-media-type", Title: "Unsupported media type", Status: http.StatusUnsupportedMediaType,
			Detail: fmt.Sprintf("Content-Type %q: want application/json", ct),
			Errors: []order.FieldError{{Field: "Content-Type", Detail: "must be application/json (charset utf-8, if any)"}},
		})
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeProblem(c, bodyTooLarge())
			return nil, false
		}
		invalid(c, "body", "could not be read: "+err.Error())
		return nil, false
	}
	return body, true
}

// decodeJSON decodes body into v: known fields only, a single JSON value.
// A failure is answered with a problem that names the field, and false.
func decodeJSON(c *gin.Context, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		field, detail := describeJSONError(err)
		invalid(c, field, detail)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		invalid(c, "body", "must hold exactly one JSON value, with nothing after it")
		return false
	}
	return true
}

// orderJSON is an order as sent: the items stay raw so that each can be
// decoded on its own and a problem in one can name it (items[3].quantity).
type orderJSON struct {
	CustomerID string            `json:"customer_id"`
	Items      []json.RawMessage `json:"items"`
}

// decodeOrder reads an order.Input from c's body, answering every problem
// with a 400 that names the field, including the item's index.
func decodeOrder(c *gin.Context) (order.Input, bool) {
	body, ok := readJSONBody(c)
	if !ok {
		return order.Input{}, false
	}
	return decodeOrderBody(c, body)
}

// decodeOrderBody decodes and checks the text of an order's body: what
// it decodes to is exactly what was sent (checkOrderText).
func decodeOrderBody(c *gin.Context, body []byte) (order.Input, bool) {
	if field, detail, bad := checkOrderText(body); bad {
		invalid(c, field, detail)
		return order.Input{}, false
	}
	var raw orderJSON
	if !decodeJSON(c, body, &raw) {
		return order.Input{}, false
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
			invalid(c, field, detail)
			return order.Input{}, false
		}
	}
	return in, true
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
