//go:build race

package apptest

// raceEnabled: the race detector allows 8,128 live goroutines, and net/http
// holds one per connection.
const raceEnabled = true
