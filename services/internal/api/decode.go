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

// decodeJSON reads c's body into v. It insists on a JSON content type, a body
// within MaxBodyBytes, known fields only and a single JSON value; every
// failure is answered here with a problem that names the field, and false.
func decodeJSON(c *gin.Context, v any) bool {
	ct := c.GetHeader("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		writeProblem(c, Problem{
			Type: problemBase + "unsupported-media-type", Title: "Unsupported media type", Status: http.StatusUnsupportedMediaType,
			Detail: fmt.Sprintf("Content-Type %q: want application/json", ct),
			Errors: []order.FieldError{{Field: "Content-Type", Detail: "must be application/json"}},
		})
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeProblem(c, Problem{
				Type: problemBase + "body-too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
				Detail: fmt.Sprintf("the body must be at most %d bytes", MaxBodyBytes),
				Errors: []order.FieldError{{Field: "body", Detail: fmt.Sprintf("must be at most %d bytes", MaxBodyBytes)}},
			})
			return false
		}
		invalid(c, "body", "could not be read: "+err.Error())
		return false
	}
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
	var raw orderJSON
	if !decodeJSON(c, &raw) {
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
