package apptest

import "github.com/orderlab/orderlab/services/internal/order"

// storedOrder mirrors the JSON of a stored order.
type storedOrder struct {
	ID         int64        `json:"id"`
	CustomerID string       `json:"customer_id"`
	Items      []order.Item `json:"items"`
	TotalCents int64        `json:"total_cents"`
	CreatedAt  string       `json:"created_at"`
}

type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Errors []struct {
		Field  string `json:"field"`
		Detail string `json:"detail"`
	} `json:"errors"`
	WaitedSeconds *float64 `json:"waited_seconds"`
}
