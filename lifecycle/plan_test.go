package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/lifecycle"
)

// synth builds a listing of keys, each modified age ago.
func synth(age time.Duration, keys ...string) []gateway.Attrs {
	out := make([]gateway.Attrs, len(keys))
	for i, k := range keys {
		out[i] = gateway.Attrs{Key: k, Size: 1, Modified: retNow.Add(-age)}
	}
	return out
}

func batches(from, to int64, dirs ...string) []string {
	var ks []string
	for n := from; n <= to; n++ {
		for _, d := range dirs {
			ks = append(ks, fmt.Sprintf("%s/%d", d, n))
		}
	}
	return ks
}

func decisions(r *lifecycle.RetentionResult) map[string]string {
	m := map[string]string{}
	for _, d := range r.Keep {
		m[d.Key] = lifecycle.Keep
	}
	for _, d := range r.Remove {
		m[d.Key] = lifecycle.Remove
	}
	return m
}

func wantActions(t *testing.T, r *lifecycle.RetentionResult, want map[string]string) {
	t.Helper()
	got := decisions(r)
	for k, a := range want {
		if got[k] != a {
			t.Errorf("%s: got %q, want %q", k, got[k], a)
		}
	}
	for _, d := range append(append([]lifecycle.Decision{}, r.Keep...), r.Remove...) {
		if d.Reason == "" {
			t.Errorf("%s: no reason", d.Key)
		}
	}
}

func TestPlanLogs(t *testing.T) {
	cases := []struct {
		name    string
		keys    []string
		min     int
		from    int64
		removed []string
		kept    []string
	}{
		{"clean", batches(0, 9, "offsets", "commits"), 3, 7,
			[]string{"offsets/0", "commits/6"}, []string{"offsets/7", "commits/7", "offsets/9", "commits/9"}},
		{"in flight", append(batches(0, 9, "offsets"), batches(0, 8, "commits")...), 1, 8,
			[]string{"offsets/7", "commits/7"}, []string{"offsets/8", "commits/8", "offsets/9"}},
		{"commits behind keeps L-1", append(batches(0, 9, "offsets"), batches(0, 5, "commits")...), 1, 5,
			[]string{"offsets/4", "commits/4"}, []string{"commits/5", "offsets/5", "offsets/8", "offsets/9"}},
		{"no commit log", batches(0, 9, "offsets"), 1, 8,
			[]string{"offsets/7"}, []string{"offsets/8", "offsets/9"}},
		{"fewer than min", batches(0, 4, "offsets", "commits"), 100, 0,
			nil, []string{"offsets/0", "commits/0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(time.Hour*1000, tc.keys...)}, lifecycle.RetentionPolicy{MinBatches: tc.min, Now: retNow})
			if err != nil {
				t.Fatal(err)
			}
			if r.RetainFrom == nil || *r.RetainFrom != tc.from {
				t.Fatalf("retain from %v, want %d", r.RetainFrom, tc.from)
			}
			want := map[string]string{}
			for _, k := range tc.removed {
				want[k] = lifecycle.Remove
			}
			for _, k := range tc.kept {
				want[k] = lifecycle.Keep
			}
			wantActions(t, r, want)
		})
	}
}

func TestPlanRetainFor(t *testing.T) {
	old := synth(100*time.Hour, batches(0, 5, "offsets", "commits")...)
	young := synth(time.Hour, batches(6, 9, "offsets", "commits")...)
	l := lifecycle.Listing{Objects: append(old, young...)}
	r, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{MinBatches: 1, RetainFor: 72 * time.Hour, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	if *r.RetainFrom != 6 {
		t.Fatalf("retain from %d, want 6 (the oldest batch younger than 72h)", *r.RetainFrom)
	}
	wantActions(t, r, map[string]string{"offsets/5": lifecycle.Remove, "offsets/6": lifecycle.Keep, "commits/6": lifecycle.Keep})
}

func TestPlanBadPolicy(t *testing.T) {
	for _, p := range []lifecycle.RetentionPolicy{{MinBatches: -1, Now: retNow}, {}, {RetainFor: -time.Hour, Now: retNow}} {
		if _, err := lifecycle.RetentionPlan(lifecycle.Listing{}, p); !errors.Is(err, lifecycle.ErrBadPolicy) {
			t.Errorf("%+v: %v, want ErrBadPolicy", p, err)
		}
	}
}

func TestPlanPlainState(t *testing.T) {
	keys := batches(0, 9, "offsets", "commits")
	// versions 1..10; snapshots at 3, 6, 9.
	for v := 1; v <= 10; v++ {
		keys = append(keys, fmt.Sprintf("state/0/0/%d.delta", v), fmt.Sprintf("state/0/0/.%d.delta.crc", v))
		if v%3 == 0 {
			keys = append(keys, fmt.Sprintf("state/0/0/%d.snapshot", v))
		}
	}
	keys = append(keys, "state/0/0/_metadata/schema", "state/0/_metadata/metadata", "metadata")
	r, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(0, keys...)}, lifecycle.RetentionPolicy{MinBatches: 3, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	// R = 7: snapshot 6 rebuilds version 7; everything from 6 on stays.
	wantActions(t, r, map[string]string{
		"state/0/0/5.delta":          lifecycle.Remove,
		"state/0/0/.5.delta.crc":     lifecycle.Remove,
		"state/0/0/3.snapshot":       lifecycle.Remove,
		"state/0/0/6.snapshot":       lifecycle.Keep,
		"state/0/0/6.delta":          lifecycle.Keep,
		"state/0/0/7.delta":          lifecycle.Keep,
		"state/0/0/.7.delta.crc":     lifecycle.Keep,
		"state/0/0/10.delta":         lifecycle.Keep,
		"state/0/0/_metadata/schema": lifecycle.Keep,
		"state/0/_metadata/metadata": lifecycle.Keep,
		"metadata":                   lifecycle.Keep,
	})
	// Sidecars go before their files.
	for i, d := range r.Remove {
		if strings.HasSuffix(d.Key, ".crc") {
			continue
		}
		for _, e := range r.Remove[i:] {
			if e.Key == strings.Replace(d.Key, "state/0/0/", "state/0/0/.", 1)+".crc" {
				t.Fatalf("sidecar %s is deleted after its file %s", e.Key, d.Key)
			}
		}
	}
}

// TestPlanCkgateState: ckgate's engine names each partition's tip in the
// commit; the planner keeps the tips of retained commits and their base
// chains, removes superseded and failed attempts, keeps in-flight files.
func TestPlanCkgateState(t *testing.T) {
	keys := batches(0, 5, "offsets", "commits")
	st := []string{
		"state/0/0/1_a.snapshot", "state/0/0/2_b.delta", "state/0/0/3_c.delta", "state/0/0/4_d.snapshot",
		"state/0/0/5_e.delta", "state/0/0/6_f.delta", "state/0/0/6_dead.delta", "state/0/0/7_g.delta",
		"state/0/0/3_x.delta", // a failed attempt
	}
	keys = append(keys, st...)
	deps := map[string]lifecycle.Deps{
		"state/0/0/2_b.delta": {Keys: []string{"state/0/0/1_a.snapshot"}},
		"state/0/0/3_c.delta": {Keys: []string{"state/0/0/2_b.delta"}},
		"state/0/0/5_e.delta": {Keys: []string{"state/0/0/4_d.snapshot"}},
		"state/0/0/6_f.delta": {Keys: []string{"state/0/0/5_e.delta"}},
	}
	tip := map[int64]string{0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "f"}
	commits := map[int64]*checkpoint.CommitMetadata{}
	for n, u := range tip {
		commits[n] = &checkpoint.CommitMetadata{StateUniqueIDs: map[int64][][]string{0: {{u}}}}
	}
	p := lifecycle.RetentionPolicy{MinBatches: 2, Now: retNow}
	r, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(0, keys...), Commits: commits, Deps: deps}, p)
	if err != nil {
		t.Fatal(err)
	}
	// R = 4: commits 3, 4, 5 name d, e, f.
	wantActions(t, r, map[string]string{
		"state/0/0/1_a.snapshot": lifecycle.Remove,
		"state/0/0/2_b.delta":    lifecycle.Remove,
		"state/0/0/3_c.delta":    lifecycle.Remove,
		"state/0/0/3_x.delta":    lifecycle.Remove,
		"state/0/0/6_dead.delta": lifecycle.Remove,
		"state/0/0/4_d.snapshot": lifecycle.Keep,
		"state/0/0/5_e.delta":    lifecycle.Keep,
		"state/0/0/6_f.delta":    lifecycle.Keep,
		"state/0/0/7_g.delta":    lifecycle.Keep, // in flight
	})

	// A retained commit that was not decoded keeps the whole directory.
	delete(commits, 4)
	r, err = lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(0, keys...), Commits: commits, Deps: deps}, p)
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, r, map[string]string{"state/0/0/1_a.snapshot": lifecycle.Keep, "state/0/0/3_x.delta": lifecycle.Keep})
	commits[4] = &checkpoint.CommitMetadata{StateUniqueIDs: map[int64][][]string{0: {{"e"}}}}

	// A chain that was not decoded keeps the whole directory.
	delete(deps, "state/0/0/6_f.delta")
	r, err = lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(0, keys...), Commits: commits, Deps: deps}, p)
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, r, map[string]string{"state/0/0/3_x.delta": lifecycle.Keep})
}

func TestPlanCompactedLogsAndLedger(t *testing.T) {
	keys := batches(0, 30, "offsets", "commits")
	for n := 0; n <= 25; n++ {
		name := fmt.Sprint(n)
		if (n+1)%10 == 0 {
			name += ".compact"
		}
		keys = append(keys, "sources/0/"+name)
	}
	keys = append(keys, "sources/1/0", "_ckgate/writer", "_ckgate/plan.json", "_ckgate/effects/3/00000000", "_ckgate/effects/29/00000000")
	r, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(30*24*time.Hour, keys...)}, lifecycle.RetentionPolicy{MinBatches: 5, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, r, map[string]string{
		"sources/0/9.compact":         lifecycle.Remove,
		"sources/0/18":                lifecycle.Remove,
		"sources/0/19.compact":        lifecycle.Keep,
		"sources/0/25":                lifecycle.Keep,
		"sources/1/0":                 lifecycle.Keep,
		"_ckgate/writer":              lifecycle.Keep,
		"_ckgate/plan.json":           lifecycle.Keep,
		"_ckgate/effects/3/00000000":  lifecycle.Remove,
		"_ckgate/effects/29/00000000": lifecycle.Keep,
	})
	// Young ledgers stay.
	r, err = lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(time.Hour, keys...)}, lifecycle.RetentionPolicy{MinBatches: 5, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, r, map[string]string{"_ckgate/effects/3/00000000": lifecycle.Keep})
}

// BenchmarkPlan10k plans a checkpoint of 10,000 batches with 8 partitions
// × 2 operators of ckgate-like plain state (snapshot every 10 versions).
func BenchmarkPlan10k(b *testing.B) {
	var keys []string
	keys = append(keys, batches(0, 9999, "offsets", "commits")...)
	for op := range 2 {
		for part := range 8 {
			for v := 1; v <= 10000; v++ {
				keys = append(keys, fmt.Sprintf("state/%d/%d/%d.delta", op, part, v))
				if v%10 == 0 {
					keys = append(keys, fmt.Sprintf("state/%d/%d/%d.snapshot", op, part, v))
				}
			}
		}
	}
	l := lifecycle.Listing{Objects: synth(0, keys...)}
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{Now: retNow}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	benchsum.Record(b, "retention_plan_10k_batches_ms", float64(time.Since(start).Milliseconds())/float64(n), "ms", "<1000")
	b.ReportMetric(float64(len(keys)), "keys")
}

// BenchmarkApplyLocal deletes 2,000 planned keys from a local-disk
// checkpoint (16 at once) and records the throughput.
func BenchmarkApplyLocal(b *testing.B) {
	ctx := context.Background()
	const n = 2000
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		st, err := filestore.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		r := &lifecycle.RetentionResult{}
		for i := range n {
			k := fmt.Sprintf("state/0/%d/%d.delta", i%8, i)
			if _, err := st.Put(ctx, k, []byte("x"), gateway.None()); err != nil {
				b.Fatal(err)
			}
			r.Remove = append(r.Remove, lifecycle.Decision{Key: k, Action: lifecycle.Remove})
		}
		b.StartTimer()
		start := time.Now()
		res, err := lifecycle.ApplyRetention(ctx, st, r, lifecycle.RetentionApplyOptions{})
		total += time.Since(start)
		if err != nil || res.Deleted != n {
			b.Fatalf("apply: %v, %+v", err, res)
		}
	}
	benchsum.Record(b, "retention_apply_local_deletes_per_s", float64(b.N*n)/total.Seconds(), "deletes/s", "")
}

// TestPlanUnnamedPartitionKept: unique-id state of a partition no retained
// commit names is kept, never taken for garbage.
func TestPlanUnnamedPartitionKept(t *testing.T) {
	keys := append(batches(0, 5, "offsets", "commits"), "state/1/0/1_a.snapshot", "state/1/0/2_b.delta")
	commits := map[int64]*checkpoint.CommitMetadata{}
	for n := range int64(6) {
		commits[n] = &checkpoint.CommitMetadata{StateUniqueIDs: map[int64][][]string{0: {{"z"}}}}
	}
	r, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(0, keys...), Commits: commits}, lifecycle.RetentionPolicy{MinBatches: 1, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, r, map[string]string{"state/1/0/1_a.snapshot": lifecycle.Keep, "state/1/0/2_b.delta": lifecycle.Keep, "offsets/0": lifecycle.Remove})
}
