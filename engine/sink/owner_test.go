package sink

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// openFiles opens a files sink on out for query id; adopt, when true,
// accepts every take-over.
func openFiles(t *testing.T, out gateway.Store, id string, adopt bool) (Sink, error) {
	t.Helper()
	env := Env{QueryID: id, CheckpointURL: "file:///ck/" + id,
		Open: func(context.Context, string) (gateway.Store, string, error) {
			return out, "mem://out", nil
		}}
	if adopt {
		env.Adopt = func(context.Context, Claim) (string, error) { return "test", nil }
	}
	return New(context.Background(), &spec.Spec{Sink: spec.Sink{Kind: spec.SinkFiles, Path: "out", Format: "jsonl"}}, env)
}

func oneRow(t *testing.T, line string) []row.Row {
	t.Helper()
	r, err := row.ParseJSON([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return []row.Row{r}
}

// The old owner of a sink that was handed over while it ran finds its next
// manifest written by the new owner: it stops (ErrInUse) instead of
// taking the new owner's batch for its own and skipping its rows.
func TestFilesSinkOldOwnerStopsAfterHandOver(t *testing.T) {
	ctx := context.Background()
	out := memstore.New()
	a, err := openFiles(t, out, "a", false)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a.Commit(ctx, 0, oneRow(t, `{"i":0}`)); err != nil || res.Skipped {
		t.Fatalf("a batch 0: %+v %v", res, err)
	}
	if _, err := openFiles(t, out, "b", false); !errors.Is(err, gateway.ErrInUse) || !strings.Contains(err.Error(), "query a (checkpoint file:///ck/a)") {
		t.Fatalf("b without adopting: %v, want ErrInUse naming a", err)
	}
	b, err := openFiles(t, out, "b", true)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := b.Commit(ctx, 0, oneRow(t, `{"i":100}`)); err != nil || res.Skipped {
		t.Fatalf("b batch 0: %+v %v", res, err)
	}
	if _, _, err := out.Get(ctx, checkpoint.SinkMetadataDir+"/1"); err != nil {
		t.Fatalf("b's batch 0 is not manifest 1: %v", err)
	}
	res, err := a.Commit(ctx, 1, oneRow(t, `{"i":1}`))
	if !errors.Is(err, gateway.ErrInUse) || !strings.Contains(err.Error(), "query b") {
		t.Fatalf("a batch 1 after the hand-over: %+v %v, want ErrInUse naming b", res, err)
	}
}

// Of two queries taking a sink over at once, the first to commit owns it;
// the other is refused at its first commit, before it writes data.
func TestFilesSinkConcurrentTakeOver(t *testing.T) {
	ctx := context.Background()
	out := memstore.New()
	a, _ := openFiles(t, out, "a", false)
	if _, err := a.Commit(ctx, 0, oneRow(t, `{"i":0}`)); err != nil {
		t.Fatal(err)
	}
	c, err := openFiles(t, out, "c", true)
	if err != nil {
		t.Fatal(err)
	}
	d, err := openFiles(t, out, "d", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, 0, oneRow(t, `{"i":1}`)); err != nil {
		t.Fatal(err)
	}
	before := 0
	for range out.List(ctx, "") {
		before++
	}
	if _, err := d.Commit(ctx, 0, oneRow(t, `{"i":2}`)); !errors.Is(err, gateway.ErrInUse) || !strings.Contains(err.Error(), "query c") {
		t.Fatalf("d: %v, want ErrInUse naming c", err)
	}
	after := 0
	for range out.List(ctx, "") {
		after++
	}
	if after != before {
		t.Fatalf("the refused take-over wrote %d objects", after-before)
	}
	o, n, err := checkpoint.ReadSinkOwner(ctx, out)
	if err != nil || n != 1 || o.QueryID != "c" || o.From.QueryID != "a" || o.BatchOffset != 1 {
		t.Fatalf("owner %+v entry %d %v", o, n, err)
	}
}

// The old owner going on while a query takes its sink over: a manifest it
// writes after the new owner opened is not overwritten or taken for the new
// owner's; a manifest that appears between the new owner's record and its
// first manifest stops the new owner (ErrInUse) instead of skipping its batch.
func TestFilesSinkTakeOverWhileOldOwnerWrites(t *testing.T) {
	ctx := context.Background()
	out := memstore.New()
	a, _ := openFiles(t, out, "a", false)
	if _, err := a.Commit(ctx, 0, oneRow(t, `{"i":0}`)); err != nil {
		t.Fatal(err)
	}
	b, err := openFiles(t, out, "b", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, 1, oneRow(t, `{"i":1}`)); err != nil { // after b opened
		t.Fatal(err)
	}
	if res, err := b.Commit(ctx, 0, oneRow(t, `{"i":100}`)); err != nil || res.Skipped {
		t.Fatalf("b batch 0: %+v %v", res, err)
	}
	if o, _, _ := checkpoint.ReadSinkOwner(ctx, out); o.BatchOffset != 2 {
		t.Fatalf("b's offset %d, want 2 (after a's manifest 1)", o.BatchOffset)
	}

	// the window between the owner record and the manifest
	c, err := openFiles(t, out, "c", true)
	if err != nil {
		t.Fatal(err)
	}
	cs := c.(*files)
	if _, err := cs.manifestID(ctx, 0); err != nil { // c's record: its batch 0 is manifest 3
		t.Fatal(err)
	}
	if _, err := out.Put(ctx, checkpoint.SinkMetadataDir+"/3", []byte("v1\n"), gateway.IfAbsent()); err != nil { // b's zombie
		t.Fatal(err)
	}
	if res, err := c.Commit(ctx, 0, oneRow(t, `{"i":200}`)); !errors.Is(err, gateway.ErrInUse) || !strings.Contains(err.Error(), "previous owner still writes") {
		t.Fatalf("c batch 0: %+v %v, want ErrInUse", res, err)
	}
}
