package policy_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// padded is offsets/7 as Spark also reads it: zero-padded to 20 digits,
// longer than any int64 is written.
const padded = "00000000000000000007"

// TestRootFoundByPaddedLogEntry: a directory whose only log entries have
// zero-padded names longer than 19 digits is a checkpoint root (Spark
// reads them as batches), on a cloud store and on the local disk, so
// housekeeping cannot delete one of them.
func TestRootFoundByPaddedLogEntry(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	if _, err := ms.Put(ctx, "q/offsets/"+padded, []byte("v1\n{}\n"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	roots, err := policy.NewRootFinder("s3://b", ms).Above(ctx, "s3://b/q/state/0/0/1.delta")
	if err != nil || !slices.Equal(roots, []string{"s3://b/q"}) {
		t.Fatalf("cloud roots %q, %v; want s3://b/q", roots, err)
	}

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "q", "commits"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "q", "commits", padded), []byte("v1\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := gateway.CanonicalRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	roots, err = policy.NewRootFinder("file:///", nil).Above(ctx, top+"/q/state/0/0/1.delta")
	if err != nil || !slices.Contains(roots, top+"/q") {
		t.Fatalf("local roots %q, %v; want %s/q", roots, err, top)
	}

	e := engine(t, policy.Options{})
	cron := policy.Principal{ID: "cron", Kind: policy.KindHousekeeping}
	a := policy.NewAuthorizer(e, cron, top, policy.Facts{}, nil, policy.WithExists(fs),
		policy.WithRoots(policy.NewRootFinder("file:///", nil)))
	if err := gateway.WithAuthorizer(fs, a).Delete(ctx, "q/commits/"+padded, gateway.None()); !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("housekeeping delete of commits/%s: %v, want denied", padded, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "q", "commits", padded)); err != nil {
		t.Fatalf("the log entry is gone: %v", err)
	}
}
