package lifecycle_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
		r, err := lifecycle.Plan(lifecycle.Listing{Objects: objs}, lifecycle.Policy{MinBatches: min, Now: retNow, RetainFor: 5 * time.Hour})
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
	})
}
