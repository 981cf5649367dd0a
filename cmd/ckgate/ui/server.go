package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server serves the pages of the loader's roots.
type Server struct {
	Loader *Loader
	// Hosts are the Host header values accepted (host:port, as a browser
	// sends it for the listening address); anything else is refused, so a
	// page on another origin that rebinds its name to 127.0.0.1 cannot
	// read the stores through the server.
	Hosts []string
	// FleetMaxAge is how long a fleet read is reused for the next pages
	// (sorting, filtering, paging: default 15 s); ?fresh=1 reads again.
	FleetMaxAge time.Duration

	mu      sync.Mutex
	fleet   *Fleet
	fleetAt time.Time
}

// loadFleet returns a fleet read at most FleetMaxAge ago, or reads it.
func (s *Server) loadFleet(ctx context.Context, fresh bool) (*Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	age := s.FleetMaxAge
	if age == 0 {
		age = 15 * time.Second
	}
	if s.fleet != nil && !fresh && time.Since(s.fleetAt) < age {
		return s.fleet, nil
	}
	f, err := s.Loader.LoadFleet(ctx)
	if err != nil {
		return nil, err
	}
	s.fleet, s.fleetAt = f, time.Now()
	return f, nil
}

// AllowedHosts are the Host headers a browser sends for a server
// listening on addr (a host:port): the address itself and, for a
// loopback address, localhost and the loopback addresses at that port.
func AllowedHosts(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{addr}
	}
	out := []string{net.JoinHostPort(host, port)}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		out = append(out, "localhost:"+port, "127.0.0.1:"+port, "[::1]:"+port)
	}
	return out
}

// ServeHTTP answers GET / (the fleet), GET /c?url=… (a checkpoint) and
// the page's style and script.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if err := s.allowed(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "ckgate ui only reads: "+r.Method+" is not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/static/ui.css":
		h.Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write([]byte(asset("ui.css")))
	case "/static/ui.js":
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write([]byte(asset("ui.js")))
	case "/":
		f, err := s.loadFleet(r.Context(), r.URL.Query().Get("fresh") != "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		s.page(w, func(b *bytes.Buffer) error { return RenderFleet(b, f, r.URL.Query()) })
	case "/c":
		raw := r.URL.Query().Get("url")
		if raw == "" {
			http.Error(w, "/c wants ?url=LOCATION of a checkpoint under the served URLs", http.StatusBadRequest)
			return
		}
		root, rel, err := s.Loader.Resolve(raw)
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		c, err := s.Loader.LoadCheckpoint(r.Context(), root, rel)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		var roots []string
		for _, rt := range s.Loader.Roots {
			roots = append(roots, rt.canon)
		}
		s.page(w, func(b *bytes.Buffer) error { return RenderCheckpoint(b, c, roots, s.Loader.now(), r.URL.Query()) })
	case "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) page(w http.ResponseWriter, f func(*bytes.Buffer) error) {
	var b bytes.Buffer
	if err := f(&b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// allowed refuses a client that is not on this machine's loopback and a
// Host header the server does not listen as.
func (s *Server) allowed(r *http.Request) error {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("ckgate ui answers local clients only, not %s", r.RemoteAddr)
	}
	for _, h := range s.Hosts {
		if strings.EqualFold(r.Host, h) {
			return nil
		}
	}
	return fmt.Errorf("%w: Host %q is not the address ckgate ui listens on (%s)", errBadHost, r.Host, strings.Join(s.Hosts, ", "))
}

var errBadHost = errors.New("refused")
