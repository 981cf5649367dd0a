package policy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// purgeStore holds a root with offsets/0..offsets and commits/0..commits
// (negative: none), and a sources/0 and _spark_metadata log of 25 entries
// compacted at 9 and 19.
func purgeStore(t *testing.T, offsets, commits int) gateway.Store {
	t.Helper()
	ctx := context.Background()
	s := memstore.New()
	put := func(k string) {
		if _, err := s.Put(ctx, k, []byte("v1\n{}"), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	put("metadata")
	for n := 0; n <= offsets; n++ {
		put(fmt.Sprintf("offsets/%d", n))
	}
	for n := 0; n <= commits; n++ {
		put(fmt.Sprintf("commits/%d", n))
	}
	put("offsets/.21.0f3c.tmp") // a temp is no entry: it moves no head
	for n := 0; n < 25; n++ {
		name := fmt.Sprint(n)
		if n == 9 || n == 19 {
			name += ".compact"
		}
		put("sources/0/" + name)
		put("out/_spark_metadata/" + name)
	}
	return s
}

// TestJobPurgeBelowRestartFloor: a job deletes the log entries Spark's own
// purge removes (below the restart floor, or covered by a later .compact)
// and nothing a restart needs.
func TestJobPurgeBelowRestartFloor(t *testing.T) {
	e := engine(t, policy.Options{})
	job := policy.Principal{ID: "svc-q1", Kind: policy.KindJob}
	for _, tc := range []struct {
		name              string
		offsets, commits  int
		key               string
		allow             bool
		refusalMentioning string
	}{
		// batch 20 in flight: a restart reads offsets/20, offsets/19 and commits/19
		{"old offsets", 20, 19, "offsets/5", true, ""},
		{"offsets just below the floor", 20, 19, "offsets/18", true, ""},
		{"commits just below the floor", 20, 19, "commits/18", true, ""},
		{"offsets at the floor", 20, 19, "offsets/19", false, "restart floor 19"},
		{"latest commit", 20, 19, "commits/19", false, "restart floor 19"},
		{"in-flight offsets", 20, 19, "offsets/20", false, "restart floor 19"},
		// nothing in flight: a restart reads offsets/19, offsets/18 and commits/19
		{"offsets a restart reads", 19, 19, "offsets/18", false, "restart floor 18"},
		{"offsets below it", 19, 19, "offsets/17", true, ""},
		// a log whose commits lag its offsets (not Spark's order): the latest commit stays
		{"lagging commits", 20, 10, "commits/10", false, "restart floor 10"},
		{"below lagging commits", 20, 10, "offsets/9", true, ""},
		{"no commit at all", 20, -1, "offsets/0", false, "a restart needs it"},
		{"metadata", 20, 19, "metadata", false, "a restart needs it"},
		{"source entry covered by 19.compact", 20, 19, "sources/0/12", true, ""},
		{"older compact covered", 20, 19, "sources/0/9.compact", true, ""},
		{"newest compact", 20, 19, "sources/0/19.compact", false, "newest compact 19"},
		{"source entry after the compact", 20, 19, "sources/0/22", false, "newest compact 19"},
		{"sink manifest covered", 20, 19, "out/_spark_metadata/3", true, ""},
		{"sink manifest after the compact", 20, 19, "out/_spark_metadata/20", false, "newest compact 19"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			raw := purgeStore(t, tc.offsets, tc.commits)
			a := policy.NewAuthorizer(e, job, root, policy.Facts{QueryID: "q1"}, nil, policy.WithWriterSession(), policy.WithExists(raw))
			err := gateway.WithAuthorizer(raw, a).Delete(ctx, tc.key, gateway.None())
			if tc.allow {
				wantRule(t, err, "")
				if _, err := raw.Stat(ctx, tc.key); err == nil {
					t.Fatalf("%s allowed but still there", tc.key)
				}
				return
			}
			wantRule(t, err, "CKG-P002")
			if !strings.Contains(err.Error(), tc.refusalMentioning) {
				t.Fatalf("refusal %q does not say %q", err, tc.refusalMentioning)
			}
		})
	}
}

// TestJobPurgeWithoutFactsRefused: an authorizer that cannot read the log
// (no WithExists) decides a log-entry delete without input.purge, and the
// default policy refuses it as before.
func TestJobPurgeWithoutFactsRefused(t *testing.T) {
	e := engine(t, policy.Options{})
	raw := purgeStore(t, 20, 19)
	a := policy.NewAuthorizer(e, policy.Principal{ID: "svc-q1", Kind: policy.KindJob}, root, policy.Facts{QueryID: "q1"}, nil, policy.WithWriterSession())
	wantRule(t, gateway.WithAuthorizer(raw, a).Delete(context.Background(), "offsets/0", gateway.None()), "CKG-P002")
}

// TestJobPurgeFollowsTheLog: the floor a delete is decided on is the log's
// as it is when the delete is asked, not as it was when the authorizer
// first looked: a later batch's purge is allowed once its commit exists,
// and a floor seen once is not lowered by a stale listing.
func TestJobPurgeFollowsTheLog(t *testing.T) {
	ctx := context.Background()
	e := engine(t, policy.Options{})
	raw := purgeStore(t, 20, 19)
	a := policy.NewAuthorizer(e, policy.Principal{ID: "svc-q1", Kind: policy.KindJob}, root, policy.Facts{QueryID: "q1"}, nil, policy.WithWriterSession(), policy.WithExists(raw))
	s := gateway.WithAuthorizer(raw, a)
	wantRule(t, s.Delete(ctx, "offsets/10", gateway.None()), "")
	wantRule(t, s.Delete(ctx, "offsets/19", gateway.None()), "CKG-P002")
	for _, k := range []string{"commits/20", "offsets/21", "commits/21", "offsets/22"} {
		if _, err := raw.Put(ctx, k, []byte("v1\n{}"), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	wantRule(t, s.Delete(ctx, "offsets/19", gateway.None()), "")
	wantRule(t, s.Delete(ctx, "commits/20", gateway.None()), "")
	wantRule(t, s.Delete(ctx, "commits/21", gateway.None()), "CKG-P002")
	var left []string
	for at, err := range raw.List(ctx, "offsets/") {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, at.Key)
	}
	if slices.Contains(left, "offsets/10") || !slices.Contains(left, "offsets/21") {
		t.Fatalf("offsets left: %v", left)
	}
}
