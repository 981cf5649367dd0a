package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ckgate/ckgate/gateway"
)

// observability is serve's --metrics-addr endpoint: Prometheus metrics on
// /metrics, readiness on /ready.
type observability struct {
	registry *prometheus.Registry // nil without --metrics-addr
	ready    atomic.Bool
	srv      *http.Server
}

func startObservability(addr string) (*observability, error) {
	o := &observability{}
	if addr == "" {
		return o, nil
	}
	o.registry = prometheus.NewRegistry()
	o.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		if !o.ready.Load() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	o.srv = &http.Server{Handler: mux}
	go func() {
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "ckgate serve: metrics endpoint: %v\n", err)
		}
	}()
	return o, nil
}

// registerer is the registry as a prometheus.Registerer: nil (not a typed
// nil) without --metrics-addr.
func (o *observability) registerer() prometheus.Registerer {
	if o.registry == nil {
		return nil
	}
	return o.registry
}

func (o *observability) close() {
	if o.srv != nil {
		o.srv.Close()
	}
}

// accessLog opens serve's --access-log: a file appended to ("-" for
// stderr); nil without one.
func (e *env) accessLog(name string) (io.Writer, func() error, error) {
	switch name {
	case "":
		return nil, func() error { return nil }, nil
	case "-":
		return e.stderr, func() error { return nil }, nil
	}
	f, err := gateway.AppendRegularFile(name)
	if err != nil {
		return nil, nil, &InputError{Err: fmt.Errorf("--access-log: %w", err)}
	}
	return f, f.Close, nil
}
