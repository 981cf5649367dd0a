package azstore

import (
	"net/http"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// isCopy reports whether req is Copy Blob.
func isCopy(req *http.Request) bool {
	return req.Method == http.MethodPut && (req.Header.Get("x-ms-copy-source") != "" || len(req.Header["x-ms-copy-source"]) > 0)
}

// TestAmbiguousCopyResolved: a create-only copy whose first attempt was
// applied but timed out is retried by the pipeline and refused; the copy's
// write id read back makes it a success, with dst's version. The copy is
// one Copy Blob: no byte of the source is downloaded.
func TestAmbiguousCopyResolved(t *testing.T) {
	s, ht, plain := newHookedStore(t, nil)
	if _, err := plain.Put(t.Context(), "staging/7", []byte("batch 7"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	hook, fired := appliedThenTimeout(isCopy)
	var downloads int
	ht.set(func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method == http.MethodGet && req.URL.Query().Get("comp") == "" {
			downloads++
		}
		return hook(req, send)
	})
	v, err := s.d.Copy(t.Context(), "staging/7", "offsets/7", "", gateway.IfAbsent())
	ht.set(nil)
	if *fired != 1 {
		t.Fatalf("fault fired %d times", *fired)
	}
	if err != nil {
		t.Fatalf("copy after an applied-then-timed-out attempt: %v", err)
	}
	if downloads != 0 {
		t.Errorf("the copy downloaded the source %d times; Copy Blob copies inside the service", downloads)
	}
	data, gv, err := plain.Get(t.Context(), "offsets/7")
	if err != nil || string(data) != "batch 7" || gv != v {
		t.Fatalf("get = %q %q %v; the copy returned %q", data, gv, err, v)
	}
	_, err = s.d.Copy(t.Context(), "staging/7", "offsets/7", "", gateway.IfAbsent())
	if k := gateway.KindOf(err); k != gateway.ErrExists {
		t.Fatalf("a second create-only copy: %v (%v), want exists", err, k)
	}
}
