package proc

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// readyClient polls without keep-alives or proxies: every probe is a fresh
// connection to the loopback address, as a health check's would be.
var readyClient = &http.Client{
	Timeout:   time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// WaitReady polls url every 50 ms until it answers 200 OK. It gives up when
// exited closes (the server stopped; nil never closes), when within has
// passed, or when ctx ends. It serves child processes (Process.WaitReady)
// and servers run in-process alike.
func WaitReady(ctx context.Context, url string, within time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := readyClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before %s answered", url)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s (last: %v)", url, within, last)
		case <-tick.C:
		}
	}
}
