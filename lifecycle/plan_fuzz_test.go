package lifecycle_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

// FuzzPlan plans arbitrary listings (keys separated by newlines) and checks
// the invariants: every key decided once with a reason; the latest commit,
// the latest offsets and offsets/L-1 are never removed; metadata stays.
func FuzzPlan(f *testing.F) {
	f.Add("metadata\noffsets/0\noffsets/1\ncommits/0\nstate/0/0/1.delta\nstate/0/0/2.snapshot\nstate/0/0/3.delta", 1)
	f.Add("offsets/5\ncommits/3\nsources/0/9.compact\nsources/0/3\nsources/0/12\n_ckgate/effects/1/0\nstate/0/0/.1.delta.crc", 1)
	f.Add("offsets/0\ncommits/0\nstate/0/0/1_x.delta\nstate/0/0/2_y.zip\nout/_spark_metadata/19.compact\nout/_spark_metadata/3", 2)
	f.Add("_spark_metadata/0\n_spark_metadata/9.compact\n_spark_metadata/10\n_spark_metadata/.3.crc\npart-0.json\n_spark_metadata/19.compact\n_spark_metadata/21", 2)
	f.Add("offsets/0\noffsets/1\noffsets/2\ncommits/1\nstate/0/0/1.zip\nstate/0/0/2.zip\nstate/0/0/SSTs/1-a.sst\nstate/0/0/SSTs/.1-a.sst.crc\nstate/0/0/logs/2-b.log\nstate/0/0/3.changelog", 1)
	f.Fuzz(func(t *testing.T, listing string, min int) {
		if min < 1 || min > 1000 {
			min = 1
		}
		seen := map[string]bool{}
		var objs []gateway.Attrs
		for k := range strings.SplitSeq(listing, "\n") {
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			objs = append(objs, gateway.Attrs{Key: k, Size: 1, Modified: retNow.Add(-time.Duration(len(k)) * time.Hour)})
		}
		r, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: objs}, lifecycle.RetentionPolicy{MinBatches: min, Now: retNow, RetainFor: 5 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, d := range append(append([]lifecycle.Decision{}, r.Keep...), r.Remove...) {
			if _, dup := got[d.Key]; dup || d.Reason == "" {
				t.Fatalf("%s decided twice or without a reason", d.Key)
			}
			got[d.Key] = d.Action
		}
		if len(got) != len(objs) {
			t.Fatalf("%d keys decided of %d", len(got), len(objs))
		}
		must := []string{"metadata"}
		if r.LatestCommit != nil {
			must = append(must, fmt.Sprintf("commits/%d", *r.LatestCommit))
		}
		if r.LatestOffsets != nil {
			must = append(must, fmt.Sprintf("offsets/%d", *r.LatestOffsets), fmt.Sprintf("offsets/%d", *r.LatestOffsets-1))
		}
		for _, k := range must {
			if got[k] == lifecycle.Remove {
				t.Fatalf("%s removed", k)
			}
		}
		// The same keys as a file sink's output: only manifests go, never
		// the latest one nor the latest compaction.
		s, err := lifecycle.RetentionPlan(lifecycle.Listing{Objects: objs, Sink: true}, lifecycle.RetentionPolicy{MinBatches: min, Now: retNow, RetainFor: 5 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Keep)+len(s.Remove) != len(objs) {
			t.Fatalf("sink: %d keys decided of %d", len(s.Keep)+len(s.Remove), len(objs))
		}
		latest, lastCmp := int64(-1), int64(-1)
		for _, o := range objs {
			if rest, ok := strings.CutPrefix(o.Key, "_spark_metadata/"); ok {
				if id, compact, ok := checkpoint.ParseLogFileName(rest); ok {
					latest = max(latest, id)
					if compact {
						lastCmp = max(lastCmp, id)
					}
				}
			}
		}
		for _, d := range s.Remove {
			rest, ok := strings.CutPrefix(d.Key, "_spark_metadata/")
			if !ok || d.Reason == "" {
				t.Fatalf("sink plan removes %s (%q)", d.Key, d.Reason)
			}
			if id, _, ok := checkpoint.ParseLogFileName(rest); ok && (id == latest || id >= lastCmp) {
				t.Fatalf("sink plan removes %s: latest %d, latest compaction %d", d.Key, latest, lastCmp)
			}
		}
	})
}
