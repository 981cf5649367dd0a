package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/gateway"
)

// An event time the engine cannot represent fails the batch, naming the
// input file and line, and batch 0 gets no commit; the largest accepted
// time runs and its window closes after it starts.
func TestEventTimeOutOfRangeFailsTheBatch(t *testing.T) {
	ctx := context.Background()
	for _, ts := range []string{"9223372036854775807", "-1", "253402300800000", "1e300", `"0000-01-01T00:00:00Z"`} {
		t.Run(ts, func(t *testing.T) {
			w := newWorld()
			w.put(t, "in", "a.jsonl", []byte(`{"user_id":"u1","page":"p","amount":1,"ts":1767225600000}`+"\n"+
				`{"user_id":"u2","page":"p","amount":1,"ts":`+ts+`}`+"\n"))
			_, err := runAll(ctx, mustSpec(t, tumblingSpec), w.Options(nil, 7))
			if !errors.Is(err, operator.ErrEventTimeRange) || !strings.Contains(err.Error(), "a.jsonl:2") {
				t.Fatalf("got %v, want ErrEventTimeRange naming a.jsonl:2", err)
			}
			if _, _, err := w.CP.Get(ctx, checkpoint.CommitKey(0)); !errors.Is(err, gateway.ErrNotFound) {
				t.Fatalf("commits/0 written: %v", err)
			}
			for a := range w.Store("out").List(ctx, "") {
				t.Fatalf("the sink holds %s", a.Key)
			}
		})
	}
}

func TestEventTimeLargestAccepted(t *testing.T) {
	ctx := context.Background()
	w := newWorld()
	w.put(t, "in", "a.jsonl", fmt.Appendf(nil, `{"user_id":"u1","page":"p","amount":1,"ts":%d}`+"\n", operator.MaxEventTime))
	w.put(t, "in", "b.jsonl", fmt.Appendf(nil, `{"user_id":"u1","page":"p","amount":2,"ts":%d}`+"\n", operator.MaxEventTime))
	ps, err := runAll(ctx, mustSpec(t, tumblingSpec), w.Options(nil, 7))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 || ps[0].EventTime["max"] != "9999-12-31T23:59:59.999Z" ||
		ps[0].Ckgate.NextWatermarkMs != operator.MaxEventTime-10*60*1000 || ps[0].StateOperators[0].NumRowsTotal != 1 {
		t.Fatalf("progress %+v", ps)
	}
}
