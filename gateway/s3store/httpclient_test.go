package s3store

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// TestOpenKeepsConcurrentConnections: 32 reads in flight at once to one
// endpoint, twice over: the second round goes over the first round's
// connections, none dialled again (the SDK's default client kept 10 idle
// and closed the other 22).
func TestOpenKeepsConcurrentConnections(t *testing.T) {
	var dials atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", "1")
		_, _ = w.Write([]byte("x"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	st, err := Open(t.Context(), mustParse(t, "s3://bucket?region=us-east-1&path_style=true&endpoint="+url.QueryEscape(srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.Close(st)
	const inFlight = 32
	round := func() {
		// Every read holds its answer unread until all have one, so
		// that all are in flight at once, each on a connection.
		var answered, done sync.WaitGroup
		answered.Add(inFlight)
		errs := make(chan error, inFlight)
		for range inFlight {
			done.Go(func() {
				rc, _, err := st.GetStream(t.Context(), "k")
				answered.Done()
				if err != nil {
					errs <- err
					return
				}
				answered.Wait()
				if b, err := io.ReadAll(rc); err != nil || string(b) != "x" {
					errs <- fmt.Errorf("body %q, %v", b, err)
				}
				rc.Close()
			})
		}
		done.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("read: %v", err)
		}
	}
	round()
	first := dials.Load()
	if first < inFlight {
		t.Fatalf("%d reads in flight took %d connections, want one each", inFlight, first)
	}
	round()
	if again := dials.Load() - first; again != 0 {
		t.Errorf("the second round of %d reads dialled %d connections, want 0 (the first round's kept)", inFlight, again)
	}
}
