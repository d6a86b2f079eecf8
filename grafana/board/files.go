package board

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Files returns every dashboard as indented JSON, keyed by its file name in
// grafana/dashboards/.
func Files() (map[string][]byte, error) {
	d, err := PoolStarvation()
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", PoolStarvationUID, err)
	}
	data, err := encode(d)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{PoolStarvationUID + ".json": data}, nil
}

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// PromQL has < and > and & in it: keep them readable in the JSON.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
