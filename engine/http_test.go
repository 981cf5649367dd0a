package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/gateway"
)

// receiver is an HTTP endpoint that records every record it is sent, by
// idempotency key, and can fail the first requests with 503.
type receiver struct {
	mu       sync.Mutex
	got      map[string][]string // key → record JSON, once per delivery
	failNext atomic.Int32
	requests atomic.Int32
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.requests.Add(1)
	if rc.failNext.Add(-1) >= 0 {
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	var body sink.HTTPRequest
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &body); err != nil || r.Header.Get("Idempotency-Key") == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rec := range body.Records {
		rc.got[rec.Key] = append(rc.got[rec.Key], string(rec.Record))
	}
	w.WriteHeader(http.StatusNoContent)
}

// distinct returns each delivered record once, sorted, and how many keys
// were delivered more than once.
func (rc *receiver) distinct() (rows []string, dups int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range rc.got {
		rows = append(rows, rs[0])
		if len(rs) > 1 {
			dups++
		}
	}
	sort.Strings(rows)
	return rows, dups
}

const httpSpecTmpl = `
name: http
source: {kind: files, path: mem://in, max_files_per_batch: 2}
event_time: ts
watermark: 10m
where: 'page != "health"'
operator: {kind: tumbling_window, keys: [user_id], size: 5m, aggregates: [count, {sum: amount}]}
sink: {kind: http, url: '%s', batch_size: 3, timeout: 5s}
partitions: 2
`

// TestHTTPSinkExactlyOnceEffects crashes the query at every checkpoint
// write; after the restart the receiver holds every reference row, and a
// record is delivered twice only when the crash cut the ledger write of its
// chunk (the receiver then sees the same idempotency key again).
func TestHTTPSinkExactlyOnceEffects(t *testing.T) {
	files := genEvents(4, 8, 25)
	ref := refQuery{delay: 10 * 60_000, size: 5 * 60_000, perBatch: 2, where: notHealth}
	want, _ := ref.run(files)
	sawDup := false
	for k := 1; ; k++ {
		rc := &receiver{got: map[string][]string{}}
		if k%8 == 1 {
			rc.failNext.Store(1) // the first request gets a 503 and is retried
		}
		srv := httptest.NewServer(rc)
		specText := fmt.Sprintf(httpSpecTmpl, srv.URL)
		w := inputWorld(t, files)
		faults := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: k, Action: gateway.Crash})
		var mu sync.Mutex
		var hit string
		n := 0
		o := w.Options(faults, 1)
		o.Checkpoint = gateway.Intercept(o.Checkpoint, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
			if c.Op == gateway.OpPut {
				mu.Lock()
				if n++; n == k {
					hit = c.Key
				}
				mu.Unlock()
			}
			return next(ctx)
		})
		_, err := runAll(context.Background(), mustSpec(t, specText), o)
		fired := faults.Fired() > 0
		if !fired && err != nil {
			t.Fatal(err)
		}
		if fired {
			if _, err := runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 2)); err != nil {
				t.Fatalf("crash at write %d (%s): restart: %v", k, hit, err)
			}
		}
		got, dups := rc.distinct()
		sawDup = sawDup || dups > 0
		srv.Close()
		if !slices.Equal(got, want) {
			t.Fatalf("crash at write %d (%s): receiver holds %d records, reference %d\n%s", k, hit, len(got), len(want), strings.Join(got, "\n"))
		}
		switch {
		case dups > 0 && !strings.HasPrefix(hit, sink.EffectsDir+"/"):
			t.Fatalf("crash at write %d (%s): %d records delivered twice, though the ledger held their chunks", k, hit, dups)
		case dups > 3:
			t.Fatalf("crash at write %d (%s): %d records delivered twice, more than one chunk", k, hit, dups)
		}
		if !fired {
			if k < 10 {
				t.Fatalf("only %d checkpoint writes", k)
			}
			if !sawDup {
				t.Fatal("no crash between a delivery and its ledger entry: the test proves nothing about re-sends")
			}
			return
		}
	}
}
