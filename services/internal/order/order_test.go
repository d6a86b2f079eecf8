package order

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func valid() Input {
	return Input{CustomerID: "c-1", Items: []Item{{SKU: "A", Quantity: 2, UnitPriceCents: 150}, {SKU: "B", Quantity: 1, UnitPriceCents: 0}}}
}

func TestValidateNamesEveryBadField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Input)
		fields []string
	}{
		{"valid", func(*Input) {}, nil},
		{"customer missing", func(in *Input) { in.CustomerID = "" }, []string{"customer_id"}},
		{"customer too long", func(in *Input) { in.CustomerID = strings.Repeat("é", MaxTextLen+1) }, []string{"customer_id"}},
		{"customer control char", func(in *Input) { in.CustomerID = "a\x00b" }, []string{"customer_id"}},
		{"items nil", func(in *Input) { in.Items = nil }, []string{"items"}},
		{"items empty", func(in *Input) { in.Items = []Item{} }, []string{"items"}},
		{"too many items", func(in *Input) { in.Items = make([]Item, MaxItems+1) }, []string{"items"}},
		{"several problems", func(in *Input) {
			in.Items[0].Quantity = 0
			in.Items[1].UnitPriceCents = -5
			in.Items[1].SKU = ""
		}, []string{"items[0].quantity", "items[1].sku", "items[1].unit_price_cents"}},
		{"quantity over max", func(in *Input) { in.Items[1].Quantity = MaxQuantity + 1 }, []string{"items[1].quantity"}},
		{"price over max", func(in *Input) { in.Items[0].UnitPriceCents = MaxUnitPriceCents + 1 }, []string{"items[0].unit_price_cents"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := valid()
			tc.mutate(&in)
			err := in.Validate()
			if tc.fields == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var v *ValidationError
			if !errors.As(err, &v) {
				t.Fatalf("Validate() = %v, want *ValidationError", err)
			}
			var got []string
			for _, f := range v.Fields {
				got = append(got, f.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("fields = %v, want %v", got, tc.fields)
			}
		})
	}
}

func TestTotalAtTheLimitsFitsInt64(t *testing.T) {
	in := Input{CustomerID: "c", Items: make([]Item, MaxItems)}
	for i := range in.Items {
		in.Items[i] = Item{SKU: "s", Quantity: MaxQuantity, UnitPriceCents: MaxUnitPriceCents}
	}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := in.Total(), int64(MaxItems)*MaxQuantity*MaxUnitPriceCents; got != want || got <= 0 {
		t.Errorf("Total() = %d, want %d", got, want)
	}
}

func TestFingerprintTellsBodiesApart(t *testing.T) {
	a, b := valid(), valid()
	if !bytes.Equal(a.Fingerprint(), b.Fingerprint()) {
		t.Error("equal inputs have different fingerprints")
	}
	b.Items[0].Quantity++
	if bytes.Equal(a.Fingerprint(), b.Fingerprint()) {
		t.Error("different inputs share a fingerprint")
	}
	r := NewRequest(a, "k")
	if r.TotalCents != 300 || !bytes.Equal(r.Fingerprint, a.Fingerprint()) || r.IdempotencyKey != "k" {
		t.Errorf("NewRequest = %+v", r)
	}
}

func TestValidateIdempotencyKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"":                       true,
		"abc-123_XYZ:~":          true,
		"has space":              false,
		"tab\tkey":               false,
		"ünïcode":                false,
		strings.Repeat("k", 255): true,
		strings.Repeat("k", 256): false,
	} {
		if err := ValidateIdempotencyKey(key); (err == nil) != ok {
			t.Errorf("ValidateIdempotencyKey(%q) = %v, want ok=%v", key, err, ok)
		}
	}
}
