package gcsstore

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// requestLog keeps the method, path and query of every request.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (r *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *requestLog) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

func has(reqs []string, parts ...string) bool {
	for _, r := range reqs {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(r, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestCopyRequests: a plain copy is one rewrite, bytes never passing
// through; on the emulator, which ignores a rewrite's conditions, a
// conditional or pinned copy reads the source and uploads it under the
// condition; on Cloud Storage (condCopy) it is a rewrite carrying
// ifGenerationMatch=0 and ifSourceGenerationMatch.
func TestCopyRequests(t *testing.T) {
	rec := &requestLog{}
	s := newStoreOn(t, newClient(t, rec), "")
	if s.d.condCopy {
		t.Fatal("the emulator is taken for Cloud Storage")
	}
	ctx := t.Context()
	v, err := s.Put(ctx, "src", []byte("data"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	if _, err := s.d.Copy(ctx, "src", "plain", "", gateway.None()); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || !has(got, "POST", "/rewriteTo/") {
		t.Errorf("a plain copy sent %q, want one rewrite", got)
	}
	if _, err := s.d.Copy(ctx, "src", "created", v, gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); has(got, "/rewriteTo/") || !has(got, "GET", "/src") || !has(got, "ifGenerationMatch=0") {
		t.Errorf("a create-only copy on the emulator sent %q, want a read of src and a create-only upload", got)
	}
	s.d.condCopy = true
	_, _ = s.d.Copy(ctx, "src", "cas", v, gateway.IfAbsent())
	if got := rec.take(); !has(got, "POST", "/rewriteTo/", "ifGenerationMatch=0", "ifSourceGenerationMatch="+string(v)) {
		t.Errorf("a create-only pinned copy on Cloud Storage sent %q, want a rewrite with ifGenerationMatch=0 and ifSourceGenerationMatch=%s", got, v)
	}
}

func TestServiceConditions(t *testing.T) {
	for e, want := range map[string]bool{
		"": true,
		"https://storage.googleapis.com/storage/v1/": true,
		"https://storage-psc.p.googleapis.com":       true,
		"http://127.0.0.1:4443/storage/v1/":          false,
		"https://googleapis.com.evil.example":        false,
	} {
		if got := serviceConditions(e); got != want {
			t.Errorf("serviceConditions(%q) = %v, want %v", e, got, want)
		}
	}
}
