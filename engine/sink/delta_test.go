package sink

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func deltaSinkOn(t *testing.T, st gateway.Store, query string) Sink {
	t.Helper()
	s := &spec.Spec{Operator: spec.Operator{Kind: spec.OpNone}, EventTime: "ts", Sink: spec.Sink{Kind: spec.SinkDelta, Path: "t"}}
	env := Env{QueryID: query, Now: time.Now, Open: func(context.Context, string) (gateway.Store, string, error) { return st, "mem://t", nil }}
	snk, err := New(context.Background(), s, env)
	if err != nil {
		t.Fatal(err)
	}
	return snk
}

func r(names []string, vals ...row.Value) row.Row { return row.Row{Names: names, Vals: vals} }

// TestDeltaSinkOneSchema: the first batch with rows sets the table's
// schema (ts a timestamp); a later row that does not fit it fails the
// batch naming the field, and nothing is committed for it; an integer
// fits a double column; another query of a restarted sink sees the
// schema from the log.
func TestDeltaSinkOneSchema(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	snk := deltaSinkOn(t, st, "q")
	cols := []string{"id", "x", "ts"}
	if res, err := snk.Commit(ctx, 0, nil); err != nil || res.Rows != 0 {
		t.Fatalf("empty first batch: %+v %v", res, err)
	}
	if _, err := snk.Commit(ctx, 1, []row.Row{r(cols, row.IntV(1), row.FloatV(1.5), row.StrV("2026-01-01T00:00:00Z"))}); err != nil {
		t.Fatal(err)
	}
	tb, err := delta.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx, -1)
	if want := deltaSchemaString([]Column{{"id", ColLong}, {"x", ColDouble}, {"ts", ColTimestamp}}); snap.Metadata.SchemaString != want {
		t.Fatalf("schema %s, want %s", snap.Metadata.SchemaString, want)
	}
	for _, tc := range []struct {
		row  row.Row
		want string
	}{
		{r(cols, row.StrV("one"), row.FloatV(1), row.IntV(5)), `field "id"`},
		{r(cols, row.IntV(2), row.BoolV(true), row.IntV(5)), `field "x"`},
		{r(cols, row.IntV(2), row.FloatV(1), row.StrV("yesterday")), `field "ts"`},
		{r([]string{"id", "extra"}, row.IntV(2), row.IntV(1)), `field "extra" is not in the table's schema`},
	} {
		_, err := snk.Commit(ctx, 2, []row.Row{tc.row})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %s", tc.row.Names, err, tc.want)
		}
	}
	other := deltaSinkOn(t, st, "q")
	if res, err := other.Commit(ctx, 1, nil); err != nil || !res.Skipped {
		t.Fatalf("batch 1 again after a restart: %+v %v", res, err)
	}
	if _, err := other.Commit(ctx, 2, []row.Row{r(cols, row.IntV(2), row.IntV(3), row.IntV(1_700_000_000_000))}); err != nil {
		t.Fatalf("an integer in the double column: %v", err)
	}
	tb, _ = delta.Open(ctx, st, "")
	if tb.Log().Latest() != 1 {
		t.Fatalf("latest version %d, want 1 (batches 1 and 2; the refused ones commit nothing)", tb.Log().Latest())
	}
}
