package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Options configure a Proxy.
type Options struct {
	Target      string   // the emulator's base URL, http://host:port
	Provider    Provider // whose error bodies to send (default S3)
	RewriteHost bool     // send the target's host in the Host header (fake-gcs-server); S3 and Azure sign the client's
	Seed        uint64   // seeds the generator of Rule.Prob and of the choice among Rule.Faults
	Rules       []*Rule
}

// Event is one injected fault.
type Event struct {
	Seq    int    // the request's number, from 1, among every request the proxy saw
	Rule   string // the Name of the rule that injected it
	Kind   Kind   // what was injected
	Method string // the request's method
	Path   string // and path
	Query  string // and raw query
	Status int    // the status the server answered (0: not forwarded)
	Sent   int    // how many times the request reached the server
}

// Proxy is a running fault proxy.
type Proxy struct {
	Addr string // host:port it listens on, on loopback

	opts Options
	srv  *http.Server
	rp   *httputil.ReverseProxy

	mu       sync.Mutex
	rules    []*Rule
	rng      *rand.Rand
	requests int
	events   []Event
	// faulting counts faulted requests whose event is not recorded yet;
	// Events waits for them (recorded signals), so a client that saw a
	// fault always finds its event.
	faulting int
	recorded *sync.Cond
}

type ctxKey struct{}

// state is one faulted request on its way through the reverse proxy.
type state struct {
	kind  Kind
	delay time.Duration
	ev    Event
}

var (
	errDrop  = errors.New("faultproxy: drop the response")
	errReset = errors.New("faultproxy: reset the connection")
)

// Start listens on a free loopback port and serves until Close.
func Start(o Options) (*Proxy, error) {
	u, err := url.Parse(o.Target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("faultproxy: target %q: want http(s)://host:port", o.Target)
	}
	if o.Provider == "" {
		o.Provider = S3
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{Addr: l.Addr().String(), opts: o, rules: o.Rules, rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))}
	p.recorded = sync.NewCond(&p.mu)
	base := &url.URL{Scheme: u.Scheme, Host: u.Host}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(base)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			if !o.RewriteHost {
				pr.Out.Host = pr.In.Host
			}
		},
		Transport:      &transport{next: http.DefaultTransport.(*http.Transport).Clone()},
		ModifyResponse: p.modify,
		ErrorHandler:   p.failed,
	}
	p.srv = &http.Server{Handler: p}
	go p.srv.Serve(l)
	return p, nil
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return "http://" + p.Addr }

// Close stops the proxy and its open connections.
func (p *Proxy) Close() error { return p.srv.Close() }

// SetRules replaces the rules (their match counts start again).
func (p *Proxy) SetRules(rules ...*Rule) {
	p.mu.Lock()
	p.rules = rules
	p.mu.Unlock()
}

// Requests is how many requests the proxy received.
func (p *Proxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Events returns a copy of the faults injected so far, in the order they
// ended.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.faulting > 0 {
		p.recorded.Wait()
	}
	return append([]Event(nil), p.events...)
}

// Counts returns the number of faults injected per kind.
func (p *Proxy) Counts() map[Kind]int {
	m := map[Kind]int{}
	for _, e := range p.Events() {
		m[e.Kind]++
	}
	return m
}

// pick numbers the request and returns the fault to inject, or "".
func (p *Proxy) pick(r *http.Request) (int, *Rule, Kind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	for _, rule := range p.rules {
		if !rule.matches(r) || len(rule.Faults) == 0 {
			continue
		}
		rule.matched++
		if rule.Max > 0 && rule.fired >= rule.Max {
			continue
		}
		switch {
		case rule.Nth > 0:
			if rule.matched != rule.Nth {
				continue
			}
		case rule.Prob > 0:
			if p.rng.Float64() >= rule.Prob {
				continue
			}
		}
		if rule.Once {
			id := r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery
			if rule.done[id] {
				continue
			}
			if rule.done == nil {
				rule.done = map[string]bool{}
			}
			rule.done[id] = true
		}
		rule.fired++
		return p.requests, rule, rule.Faults[p.rng.IntN(len(rule.Faults))]
	}
	return p.requests, nil, ""
}

func (p *Proxy) record(ev Event) {
	p.mu.Lock()
	p.events = append(p.events, ev)
	p.faulting--
	p.recorded.Broadcast()
	p.mu.Unlock()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	seq, rule, kind := p.pick(r)
	if kind == "" {
		p.rp.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	p.faulting++
	p.mu.Unlock()
	st := &state{kind: kind, delay: rule.Delay, ev: Event{Seq: seq, Rule: rule.Name, Kind: kind, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}}
	if st.delay <= 0 {
		st.delay = 30 * time.Second
	}
	defer func() { p.record(st.ev) }()
	switch kind {
	case ResetBefore:
		io.Copy(io.Discard, r.Body)
		reset(w)
		return
	case Busy:
		io.Copy(io.Discard, r.Body)
		writeStatus(w, p.opts.Provider, http.StatusServiceUnavailable)
		return
	case Internal:
		io.Copy(io.Discard, r.Body)
		writeStatus(w, p.opts.Provider, http.StatusInternalServerError)
		return
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, st)))
}

func stateOf(r *http.Request) *state {
	st, _ := r.Context().Value(ctxKey{}).(*state)
	return st
}

// transport forwards a request, twice for Duplicate, and counts what
// reached the server.
type transport struct{ next http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := stateOf(req)
	if st == nil {
		return t.next.RoundTrip(req)
	}
	if st.kind == Duplicate {
		var body []byte
		if req.Body != nil {
			b, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			body = b
		}
		first := req.Clone(req.Context())
		first.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := t.next.RoundTrip(first)
		if err != nil {
			return nil, err
		}
		st.ev.Sent++
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		st.ev.Sent++
		st.ev.Status = resp.StatusCode
	}
	return resp, err
}

// modify applies the faults that act on the server's answer.
func (p *Proxy) modify(resp *http.Response) error {
	st := stateOf(resp.Request)
	if st == nil {
		return nil
	}
	switch st.kind {
	case DropResponse, ResetAfter:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if st.kind == ResetAfter {
			return errReset
		}
		return errDrop
	case Delay:
		t := time.NewTimer(st.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-resp.Request.Context().Done():
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return errDrop
		}
	case CutBody:
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(b) < 2 {
			// Nothing to cut: the answer is lost whole.
			return errDrop
		}
		// The header still announces the whole length: the client reads
		// half, then the connection closes.
		resp.Header.Set("Content-Length", fmt.Sprint(len(b)))
		resp.Body = io.NopCloser(bytes.NewReader(b[:len(b)/2]))
	}
	return nil
}

// failed ends a request whose answer the proxy withholds, or that the
// server could not be reached for.
func (p *Proxy) failed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errReset):
		reset(w)
	case errors.Is(err, errDrop):
		// The server closes the connection without writing anything.
		panic(http.ErrAbortHandler)
	default:
		w.WriteHeader(http.StatusBadGateway)
	}
}

// reset closes the client's connection with a TCP RST.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
