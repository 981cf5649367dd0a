package rehearse_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/rehearse"
)

// TestRehearseReportsProgress: Run reports each step before it runs (the
// reference run, then each scenario chosen, by name) and once at the end.
func TestRehearseReportsProgress(t *testing.T) {
	dir, s := demoDir(t)
	o := options(dir, "1", "crash-before-commit")
	type step struct {
		done, total int
		name        string
	}
	var got []step
	o.Progress = func(done, total int, name string) { got = append(got, step{done, total, name}) }
	rep, err := rehearse.Run(context.Background(), s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatal("the drills failed")
	}
	want := []step{{0, 3, "reference"}, {1, 3, "crash-after-offsets"}, {2, 3, "crash-before-commit"}, {3, 3, ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("progress %v, want %v", got, want)
	}
}
