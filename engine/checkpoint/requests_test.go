package checkpoint

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// countedInspect inspects st through a counting decorator and returns the
// report as JSON and the requests it made per operation.
func countedInspect(t *testing.T, st gateway.Store, o Options) (string, map[gateway.Op]int64) {
	t.Helper()
	m, err := gateway.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := inspect(t, m.Wrap(st, "mem"), o)
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(j), m.Requests()
}

// TestInspectRequestCount pins what Inspect costs a remote store, where
// every request is a round trip: one listing of the checkpoint (not one
// per directory of the layout) and one read per file the report needs.
func TestInspectRequestCount(t *testing.T) {
	b := base(t)
	_, reqs := countedInspect(t, b.st, Options{MaxBatches: 20, MaxStateVersions: 1})
	if reqs[gateway.OpList] != 1 {
		t.Errorf("listings: %d, want 1 (%v)", reqs[gateway.OpList], reqs)
	}
	if got, want := reqs[gateway.OpGet], int64(50); got > want {
		t.Errorf("reads: %d, want at most %d (%v)", got, want, reqs)
	}
	for op, n := range reqs {
		if op != gateway.OpList && op != gateway.OpGet {
			t.Errorf("%d %s requests: Inspect only lists and reads", n, op)
		}
	}
}

// TestInspectBesideLargeDirectory: a checkpoint whose root also holds many
// keys outside its layout is listed directory by directory instead (one
// page of strangers at most is read), with the same report.
func TestInspectBesideLargeDirectory(t *testing.T) {
	b := base(t)
	want, _ := countedInspect(t, b.st, Options{})
	for i := range maxStrangers + 1 {
		put(t, b.st, fmt.Sprintf("data/part-%05d.json", i), []byte("{}"))
	}
	got, reqs := countedInspect(t, b.st, Options{})
	if got != want {
		t.Errorf("report changed by keys outside the layout:\n got %s\nwant %s", got, want)
	}
	if n := reqs[gateway.OpList]; n != int64(1+len(listPrefixes)) {
		t.Errorf("listings: %d, want %d (the root, then each prefix)", n, 1+len(listPrefixes))
	}
}

// TestListRootMatchesEachPrefix: the single listing yields the keys of the
// per-prefix listings, in the same order, whatever lies beside them.
func TestListRootMatchesEachPrefix(t *testing.T) {
	b := base(t)
	for _, k := range []string{"metadata.crc", ".metadata.crc", ".tmp-1", "_ckgate/writer", "metadataX/y", "data/x", "offsets/x/y", "zz", "sink/_spark_metadata/0"} {
		put(t, b.st, k, []byte("{}"))
	}
	one, ok := listRoot(t0ctx, b.st)
	if !ok {
		t.Fatal("listRoot gave up")
	}
	for i, p := range listPrefixes {
		var want []string
		for a, err := range b.st.List(t0ctx, p) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, a.Key)
		}
		var got []string
		for _, a := range one[i] {
			got = append(got, a.Key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("prefix %q: got %q, want %q", p, got, want)
		}
	}
}
