package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is a server that records what reached it and answers each
// request with its number.
type upstream struct {
	mu     sync.Mutex
	bodies []string
	srv    *httptest.Server
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, r.Method+" "+r.URL.Path+" "+string(b))
		n := len(u.bodies)
		u.mu.Unlock()
		if r.URL.Path == "/big" {
			io.WriteString(w, strings.Repeat("x", 1000))
			return
		}
		fmt.Fprintf(w, "answer %d", n)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

func start(t *testing.T, u *upstream, o Options) *Proxy {
	t.Helper()
	o.Target = u.srv.URL
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func do(c *http.Client, method, url, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// noRetry is a client that does not replay requests on its own.
func noRetry() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func TestPassThrough(t *testing.T) {
	u := newUpstream(t)
	p := start(t, u, Options{})
	status, body, err := do(noRetry(), "PUT", p.URL()+"/b/k", "data")
	if err != nil || status != 200 || body != "answer 1" {
		t.Fatalf("got %d %q %v", status, body, err)
	}
	if got := u.seen(); !slices.Equal(got, []string{"PUT /b/k data"}) {
		t.Fatalf("upstream saw %q", got)
	}
	if p.Requests() != 1 || len(p.Events()) != 0 {
		t.Fatalf("requests %d, events %v", p.Requests(), p.Events())
	}
}

// TestFaults checks every kind: whether the server got the request, what
// the client sees, and that the fault is logged.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		path     string
		applied  int  // requests that reached the server
		clientOK bool // the client gets a whole answer
		status   int  // and its status
		body     string
		status0  int // the server's status in the event
	}{
		{DropResponse, "/k", 1, false, 0, "", 200},
		{ResetBefore, "/k", 0, false, 0, "", 0},
		{ResetAfter, "/k", 1, false, 0, "", 200},
		{Busy, "/k", 0, true, 503, "<Code>SlowDown</Code>", 0},
		{Internal, "/k", 0, true, 500, "<Code>InternalError</Code>", 0},
		{CutBody, "/big", 1, false, 0, "", 200},
		{CutBody, "/k", 1, false, 0, "", 200},
		{Duplicate, "/k", 2, true, 200, "answer 2", 200},
	} {
		t.Run(string(tc.kind)+tc.path, func(t *testing.T) {
			u := newUpstream(t)
			p := start(t, u, Options{Rules: []*Rule{{Faults: []Kind{tc.kind}}}})
			status, body, err := do(noRetry(), "PUT", p.URL()+tc.path, "payload")
			if tc.clientOK != (err == nil) {
				t.Fatalf("client error %v, want ok=%v", err, tc.clientOK)
			}
			if tc.clientOK && (status != tc.status || !strings.Contains(body, tc.body)) {
				t.Fatalf("client got %d %q, want %d containing %q", status, body, tc.status, tc.body)
			}
			if got := u.seen(); len(got) != tc.applied {
				t.Fatalf("server saw %d requests %q, want %d", len(got), got, tc.applied)
			}
			for _, b := range u.seen() {
				if b != "PUT "+tc.path+" payload" {
					t.Fatalf("server got %q", b)
				}
			}
			ev := p.Events()
			if len(ev) != 1 || ev[0].Kind != tc.kind || ev[0].Seq != 1 || ev[0].Method != "PUT" || ev[0].Path != tc.path ||
				ev[0].Sent != tc.applied || ev[0].Status != tc.status0 {
				t.Fatalf("events %+v", ev)
			}
		})
	}
}

func TestCutBodyIsShort(t *testing.T) {
	u := newUpstream(t)
	p := start(t, u, Options{Rules: []*Rule{{Faults: []Kind{CutBody}}}})
	resp, err := noRetry().Get(p.URL() + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(b) != 500 || resp.ContentLength != 1000 {
		t.Fatalf("read %d of %d bytes, err %v; want 500 then unexpected EOF", len(b), resp.ContentLength, err)
	}
}

func TestDelayPastClientTimeout(t *testing.T) {
	u := newUpstream(t)
	p := start(t, u, Options{Rules: []*Rule{{Faults: []Kind{Delay}, Delay: time.Minute}}})
	c := noRetry()
	c.Timeout = 200 * time.Millisecond
	begin := time.Now()
	_, _, err := do(c, "PUT", p.URL()+"/k", "x")
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("want a client timeout, got %v", err)
	}
	if time.Since(begin) > 20*time.Second {
		t.Fatal("the client waited for the delay")
	}
	if len(u.seen()) != 1 {
		t.Fatalf("the server must have applied the delayed request: %q", u.seen())
	}
}

func TestProviderBodies(t *testing.T) {
	for _, tc := range []struct {
		p      Provider
		status int
		want   []string
		header string
	}{
		{S3, 503, []string{"<Code>SlowDown</Code>"}, ""},
		{Azure, 503, []string{"<Code>ServerBusy</Code>"}, "ServerBusy"},
		{Azure, 500, []string{"<Code>InternalError</Code>"}, "InternalError"},
		{GCS, 503, []string{`"code":503`, `"reason":"backendError"`}, ""},
	} {
		t.Run(fmt.Sprint(tc.p, tc.status), func(t *testing.T) {
			u := newUpstream(t)
			kind := Busy
			if tc.status == 500 {
				kind = Internal
			}
			p := start(t, u, Options{Provider: tc.p, Rules: []*Rule{{Faults: []Kind{kind}}}})
			resp, err := noRetry().Get(p.URL() + "/k")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.header {
				t.Fatalf("got %d, x-ms-error-code %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Fatalf("body %s lacks %s", b, w)
				}
			}
		})
	}
}

func TestSelectors(t *testing.T) {
	u := newUpstream(t)
	p := start(t, u, Options{Rules: []*Rule{
		{Method: "PUT", Path: regexp.MustCompile(`^/logs/`), Nth: 2, Faults: []Kind{Busy}},
		{Method: "DELETE", Max: 1, Faults: []Kind{Internal}},
	}})
	c := noRetry()
	var got []int
	for _, r := range []struct{ method, path string }{
		{"PUT", "/logs/0"}, {"GET", "/logs/0"}, {"PUT", "/data/1"}, {"PUT", "/logs/1"}, {"PUT", "/logs/2"},
		{"DELETE", "/x"}, {"DELETE", "/y"},
	} {
		status, _, err := do(c, r.method, p.URL()+r.path, "")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, status)
	}
	if want := []int{200, 200, 200, 503, 200, 500, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	var seqs []int
	for _, e := range p.Events() {
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(seqs, []int{4, 6}) {
		t.Fatalf("fault seqs %v, want [4 6]", seqs)
	}
}

// TestSeeded: a probability rule fires on the same requests for the same
// seed, about as often as asked, and draws among its kinds.
func TestSeeded(t *testing.T) {
	run := func(seed uint64) ([]int, map[Kind]int) {
		u := newUpstream(t)
		p := start(t, u, Options{Seed: seed, Rules: []*Rule{{Prob: 0.2, Faults: []Kind{Busy, Internal}}}})
		c := noRetry()
		for range 300 {
			if _, _, err := do(c, "GET", p.URL()+"/k", ""); err != nil {
				t.Fatal(err)
			}
		}
		var seqs []int
		for _, e := range p.Events() {
			seqs = append(seqs, e.Seq)
		}
		return seqs, p.Counts()
	}
	a, counts := run(7)
	b, _ := run(7)
	c, _ := run(8)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed fired on different requests")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds fired on the same requests")
	}
	if len(a) < 30 || len(a) > 90 || counts[Busy] == 0 || counts[Internal] == 0 {
		t.Fatalf("%d faults in 300 requests at 20%%, by kind %v", len(a), counts)
	}
}

// TestOnce: a Once rule faults a request once and lets its retry through.
func TestOnce(t *testing.T) {
	u := newUpstream(t)
	p := start(t, u, Options{Rules: []*Rule{{Once: true, Faults: []Kind{Busy}}}})
	c := noRetry()
	var got []int
	for _, path := range []string{"/a", "/a", "/b", "/a?x=1", "/b"} {
		status, _, err := do(c, "PUT", p.URL()+path, "")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, status)
	}
	if want := []int{503, 200, 503, 503, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
}
