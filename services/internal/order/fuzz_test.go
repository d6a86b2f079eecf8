package order

import (
	"bytes"
	"testing"
)

// FuzzFingerprint: the fingerprint of a valid order is deterministic and
// tells orders apart: two valid inputs share one exactly when they are
// equal, so a reused Idempotency-Key is never taken for a replay. Only a
// keyed request is fingerprinted.
func FuzzFingerprint(f *testing.F) {
	f.Add("c-1", "A-1", 2, int64(1250), "c-1", "A-1", 2, int64(1250), false, "key-1")
	f.Add("c-1", "A-1", 2, int64(1250), "c-1", "A-1", 2, int64(125), true, "")
	f.Fuzz(func(t *testing.T, c1, s1 string, q1 int, p1 int64, c2, s2 string, q2 int, p2 int64, twoItems bool, key string) {
		a := Input{CustomerID: c1, Items: []Item{{SKU: s1, Quantity: q1, UnitPriceCents: p1}}}
		b := Input{CustomerID: c2, Items: []Item{{SKU: s2, Quantity: q2, UnitPriceCents: p2}}}
		if twoItems {
			b.Items = append(b.Items, a.Items[0])
		}
		if !bytes.Equal(a.Fingerprint(), a.Fingerprint()) {
			t.Fatalf("%+v: two fingerprints", a)
		}
		if a.Validate() != nil || b.Validate() != nil {
			return
		}
		equal := a.CustomerID == b.CustomerID && len(a.Items) == len(b.Items) && a.Items[0] == b.Items[0]
		if same := bytes.Equal(a.Fingerprint(), b.Fingerprint()); same != equal {
			t.Fatalf("%+v and %+v: same fingerprint %v, equal %v", a, b, same, equal)
		}
		r := NewRequest(a, key)
		if (len(r.Fingerprint) == 0) != (key == "") || r.TotalCents != a.Total() {
			t.Fatalf("NewRequest(%+v, %q) = %+v", a, key, r)
		}
	})
}
