package rehearse

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func TestRehearseReceiverCountsByIdempotencyKey(t *testing.T) {
	r, err := NewReceiver(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	post := func(body string) {
		t.Helper()
		resp, err := http.Post(r.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	post(`{"query":"q","batch":3,"records":[{"key":"q/3/0","record":{"a":1}},{"key":"q/3/1","record":{"a":2}}]}`)
	post(`{"query":"q","batch":3,"records":[{"key":"q/3/1","record":{"a":2}}]}`) // a re-delivery
	post(`{"query":"q","batch":3,"records":[{"key":"q/3/0","record":{"a":9}}]}`) // a conflict
	st := r.Stats()
	if st.Posts != 3 || st.Records != 4 || st.Effects != 2 || st.Redelivered != 2 || st.Conflicts != 1 || r.batchEffects(3) != 2 {
		t.Fatalf("stats %+v, batch 3: %d", st, r.batchEffects(3))
	}
	if rows := r.Rows(); len(rows) != 2 || rows[0] != `{"a":1}` {
		t.Fatalf("rows %v", rows)
	}
}

func TestRehearseRetryStore(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: 1, Action: gateway.FailAfter},
		gateway.Fault{Op: gateway.OpGet, Nth: 1, Action: gateway.FailBefore},
		gateway.Fault{Op: gateway.OpList, Nth: 1, Action: gateway.FailBefore})
	s := withRetry(f.Wrap(inner), 3)
	// an ambiguous create-only write, retried, finds its own first attempt
	if _, err := s.Put(ctx, "k", []byte("v"), gateway.IfAbsent()); !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("retried create: %v, want ErrExists", err)
	}
	if b, _, err := s.Get(ctx, "k"); err != nil || string(b) != "v" {
		t.Fatalf("get after a transient failure: %q %v", b, err)
	}
	n := 0
	for _, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("listed %d keys", n)
	}
	crash := gateway.NewFaults(gateway.Fault{Op: gateway.OpGet, Nth: 1, Action: gateway.Crash})
	c := withRetry(crash.Wrap(inner), 3)
	if _, _, err := c.Get(ctx, "k"); !errors.Is(err, gateway.ErrCrashed) {
		t.Fatalf("a crash was retried: %v", err)
	}
}

func TestRehearseLateInput(t *testing.T) {
	s := &spec.Spec{EventTime: "ts", Watermark: spec.Duration(600e9), Operator: spec.Operator{Kind: spec.OpDedup, Keys: []string{"id"}},
		Source: spec.Source{MaxFilesPerBatch: 2}}
	one := []inputFile{{Key: "a", Data: []byte(`{"id":1,"ts":1000}` + "\n")}}
	if _, err := buildLateInput(s, one); err == nil || !strings.Contains(err.Error(), "one batch") {
		t.Fatalf("err = %v", err)
	}
	files := []inputFile{
		{Key: "a", Data: []byte(`{"id":1,"ts":"2026-01-01T10:00:00Z"}`)},
		{Key: "b", Data: []byte(`{"id":2,"ts":"2026-01-01T10:20:00Z"}`)},
		{Key: "c", Data: []byte(`{"id":3,"ts":1767262800000}`)},
	}
	li, err := buildLateInput(s, files)
	if err != nil {
		t.Fatal(err)
	}
	if li.Inside != 5 || li.Beyond != 5 || li.Key != "c-rehearse-late.jsonl" || li.Chunk != 1 {
		t.Fatalf("%+v", li)
	}
	// the batch reading the injected file has watermark 10:20 - 10m = 10:10; dropped:
	// 5 injected at or below it, and the copies of row 1 (10:00): 3 of the first file, 3 of the latest batch
	st, err := simulate(s, li.Files)
	if err != nil {
		t.Fatal(err)
	}
	if st.Watermark[1] != 1767262200000 || st.LateDropped != 11 || st.LateAccepted < 5 {
		t.Fatalf("%+v", st)
	}
	if !bytes.Contains(li.Files[3].Data, []byte(`"ts":"2026-01-01T10:10:00.000Z"`)) {
		t.Fatalf("no row at the watermark:\n%s", li.Files[3].Data)
	}
}
