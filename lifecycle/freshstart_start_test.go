package lifecycle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/lifecycle"
)

// withPlan is a checkpoint whose _ckgate/plan.json records source
// (nil: no plan, as a Spark checkpoint).
func withPlan(t *testing.T, plan string) gateway.Store {
	t.Helper()
	st := memstore.New()
	if plan != "" {
		if _, err := st.Put(context.Background(), checkpoint.PlanKey, []byte(plan), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// ResolveStart decides a fresh start's boundary from the source the plan
// records; whatever does not fit that source is ErrBadBoundary.
func TestResolveStart(t *testing.T) {
	ctx := context.Background()
	ts := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	kafka := `{"version":1,"source":{"kind":"kafka","topic":"clicks"}}`
	files := `{"version":1,"source":{"kind":"files","path":"file:///in"}}`

	sp, err := lifecycle.ResolveStart(ctx, withPlan(t, kafka), lifecycle.StartRequest{Offsets: `{"clicks":{"0":5,"1":7}}`})
	if err != nil || sp.Kafka["clicks"][1] != 7 || sp.Files != nil {
		t.Fatalf("Kafka offsets: %+v, %v", sp, err)
	}
	sp, err = lifecycle.ResolveStart(ctx, withPlan(t, files), lifecycle.StartRequest{Timestamp: &ts})
	if err != nil || sp.Files == nil || sp.Files.ModifiedFrom == nil || !sp.Files.ModifiedFrom.Equal(ts) || sp.Kafka != nil {
		t.Fatalf("files from a time: %+v, %v", sp, err)
	}
	for name, c := range map[string]struct {
		plan  string
		req   lifecycle.StartRequest
		field string // the BoundaryError's; "": the request as a whole
	}{
		"neither":                   {kafka, lifecycle.StartRequest{}, ""},
		"both":                      {kafka, lifecycle.StartRequest{Offsets: `{"clicks":{"0":1}}`, Timestamp: &ts}, ""},
		"other topic":               {kafka, lifecycle.StartRequest{Offsets: `{"views":{"0":1}}`}, "Offsets"},
		"two topics":                {kafka, lifecycle.StartRequest{Offsets: `{"clicks":{"0":1},"views":{"0":1}}`}, "Offsets"},
		"not offsets":               {kafka, lifecycle.StartRequest{Offsets: `{"logOffset":3}`}, "Offsets"},
		"time without brokers":      {kafka, lifecycle.StartRequest{Timestamp: &ts}, "Brokers"},
		"time without topic":        {`{"version":1,"source":{"kind":"kafka"}}`, lifecycle.StartRequest{Timestamp: &ts, Brokers: []string{"127.0.0.1:1"}}, "Topic"},
		"other source":              {`{"version":1,"source":{"kind":"rate"}}`, lifecycle.StartRequest{Offsets: `{"t":{"0":1}}`}, "Offsets"},
		"other source, a time":      {`{"version":1,"source":{"kind":"rate"}}`, lifecycle.StartRequest{Timestamp: &ts}, "Timestamp"},
		"brokers for files":         {files, lifecycle.StartRequest{Timestamp: &ts, Brokers: []string{"127.0.0.1:1"}}, "Brokers"},
		"topic for files":           {files, lifecycle.StartRequest{Timestamp: &ts, Topic: "clicks"}, "Topic"},
		"Kafka offsets for files":   {files, lifecycle.StartRequest{Offsets: `{"clicks":{"0":1}}`}, "Offsets"},
		"Spark checkpoint, garbage": {"", lifecycle.StartRequest{Offsets: `[1,2]`}, "Offsets"},
	} {
		t.Run(name, func(t *testing.T) {
			sp, err := lifecycle.ResolveStart(ctx, withPlan(t, c.plan), c.req)
			if !errors.Is(err, lifecycle.ErrBadBoundary) {
				t.Fatalf("ResolveStart(%+v) = %+v, %v; want ErrBadBoundary", c.req, sp, err)
			}
			var be *lifecycle.BoundaryError
			if field := ""; errors.As(err, &be) {
				if field = be.Field; field != c.field {
					t.Fatalf("%v: at fault %q, want %q", err, field, c.field)
				}
			} else if c.field != "" {
				t.Fatalf("%v: names no field, want %q", err, c.field)
			}
		})
	}
	if _, err := lifecycle.ResolveStart(ctx, withPlan(t, `{"version":1,"source":`), lifecycle.StartRequest{Timestamp: &ts}); !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("corrupt plan: %v, want checkpoint.ErrCorrupt", err)
	}
}
