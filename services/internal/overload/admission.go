package overload

// Work names what a request will ask of the database, so that a model can
// admit it (or turn it away) before the request's body is read.
type Work int

const (
	// PlaceOrder is POST /orders: one order written.
	PlaceOrder Work = iota
	// GetOrder is GET /orders/{id}: one order read.
	GetOrder
	// HoldConnection is GET /work/db: one connection held for a while.
	HoldConnection
)

func (w Work) String() string {
	switch w {
	case PlaceOrder:
		return "place_order"
	case GetOrder:
		return "get_order"
	case HoldConnection:
		return "hold_connection"
	}
	return "unknown"
}

// A Ticket is a request's admission: what the model reserved for it (a
// permit, a queue slot). The handler holds it while it serves the request and
// calls Release when it is done, whatever happened; Release is idempotent.
type Ticket interface {
	Release()
}

// Free is the ticket of a model that admits everything: it reserves nothing.
var Free Ticket = free{}

type free struct{}

func (free) Release() {}
