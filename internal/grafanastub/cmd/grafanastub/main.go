// Command grafanastub serves the Grafana stand-in (internal/grafanastub) on
// -listen, Grafana's port by default.
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/orderlab/orderlab/internal/grafanastub"
)

func main() {
	listen := flag.String("listen", ":3000", "address to serve on")
	flag.Parse()
	log.Printf("grafanastub on %s: %s", *listen, grafanastub.Notice)
	srv := &http.Server{Addr: *listen, Handler: grafanastub.New(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
