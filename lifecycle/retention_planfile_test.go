package lifecycle_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

func logListing(n int) lifecycle.Listing {
	var l lifecycle.Listing
	l.Objects = append(l.Objects, gateway.Attrs{Key: "metadata", Size: 45, Version: "m", Modified: retNow})
	for i := range n {
		for _, d := range []string{"commits", "offsets"} {
			l.Objects = append(l.Objects, gateway.Attrs{Key: fmt.Sprintf("%s/%d", d, i), Size: 10, Version: gateway.Version(fmt.Sprint("v", i)), Modified: retNow})
		}
	}
	return l
}

func TestPlanTargetCheck(t *testing.T) {
	plan := func(l lifecycle.Listing, min int) *lifecycle.RetentionResult {
		r, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{MinBatches: min, Now: retNow})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	l := logListing(6)
	r := plan(l, 2)
	tg := lifecycle.NewPlanTarget("ck", "file:///ck", "q", l, r)
	if len(tg.Remove) == 0 {
		t.Fatal("nothing planned")
	}
	if err := tg.Check(l, plan(l, 2), "q"); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	// More batches: more to remove, none of the planned keys needed.
	more := logListing(9)
	if err := tg.Check(more, plan(more, 2), "q"); err != nil {
		t.Fatalf("more batches: %v", err)
	}
	for _, tc := range []struct {
		name string
		l    lifecycle.Listing
		now  *lifecycle.RetentionResult
		q    string
		want string
	}{
		{"query", l, plan(l, 2), "other", "query id"},
		{"needed", l, plan(l, 5), "q", "needs it now"},
		{"rolled back", logListing(4), plan(logListing(4), 2), "q", "latest commit batch was 5"},
	} {
		err := tg.Check(tc.l, tc.now, tc.q)
		if !errors.Is(err, lifecycle.ErrPlanStale) || !errors.Is(err, gateway.ErrPrecondition) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	rewritten := logListing(6)
	rewritten.Objects[1].Version = "other"
	if err := tg.Check(rewritten, plan(rewritten, 2), "q"); err == nil || !strings.Contains(err.Error(), rewritten.Objects[1].Key+": version") {
		t.Errorf("rewritten: %v", err)
	}
}
