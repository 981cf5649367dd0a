package s3atrace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kinds is the kinds of steps in order.
func kinds(steps []Step) []Kind {
	var ks []Kind
	for _, s := range steps {
		ks = append(ks, s.Kind)
	}
	return ks
}

// TestSequences: the request sequences of a log entry's create under each
// manager, a batch's parts in Spark's order, and the temp's name.
func TestSequences(t *testing.T) {
	fc := &Driver{Bucket: "b", Root: "q", Temp: func() string { return "u" }}
	if got, want := kinds(fc.Create("offsets/7", nil)), []Kind{Probe, PutTemp, Probe, Copy, DeleteTemp}; !slices.Equal(got, want) {
		t.Fatalf("FileContext create: %v, want %v", got, want)
	}
	if k := fc.Create("offsets/7", nil)[1].Key; k != "q/offsets/.7.u.tmp" {
		t.Fatalf("temp %q, want q/offsets/.7.u.tmp", k)
	}
	ab := &Driver{Bucket: "b", Root: "q", Manager: Abortable}
	if got, want := kinds(ab.Create("commits/7", nil)), []Kind{Probe, Put}; !slices.Equal(got, want) {
		t.Fatalf("Abortable create: %v, want %v", got, want)
	}
	d := &Driver{Bucket: "b", Root: "q", Partitions: 1, Sink: "out", MinBatchesToRetain: 10}
	var groups []string
	for _, s := range d.Batch(19) {
		if len(groups) == 0 || groups[len(groups)-1] != s.Group {
			groups = append(groups, s.Group)
		}
	}
	want := []string{"q/offsets/19", "purge q/offsets", "purge q/commits", "q/state/0/0/20.delta", "q/state/0/0/20.snapshot", "purge q/state/0/0"}
	if len(groups) != 9 || !slices.Equal(groups[:6], want) || !strings.HasPrefix(groups[6], "out/part-00000-") ||
		groups[7] != "out/_spark_metadata/19.compact" || groups[8] != "q/commits/19" {
		t.Fatalf("batch 19 writes %v", groups)
	}
	if from, to := d.stateExpired(19); from != 1 || to != 10 {
		t.Fatalf("batch 19 expires state versions [%d, %d), want [1, 10) (snapshot 10 rebuilds version 10)", from, to)
	}
}

// TestRunCancelsTemp: after a failed step, Run runs only the Always steps
// of its group (the temp's DELETE) and returns the failure named by step.
func TestRunCancelsTemp(t *testing.T) {
	var ran []string
	step := func(name, group string, always bool, err error) Step {
		return Step{Name: name, Group: group, Always: always, Do: func(context.Context) error { ran = append(ran, name); return err }}
	}
	boom := errors.New("412")
	err := Run(context.Background(), []Step{
		step("put temp", "a", false, nil), step("copy", "a", false, boom), step("probe", "a", false, nil),
		step("delete temp", "a", true, nil), step("next file", "b", false, nil), step("its delete", "b", true, nil)})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "copy: ") {
		t.Fatalf("Run = %v, want the copy's failure", err)
	}
	if fmt.Sprint(ran) != "[put temp copy delete temp]" {
		t.Fatalf("ran %v", ran)
	}
}
