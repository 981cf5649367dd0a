package policy

import (
	"errors"
	"path/filepath"
	"testing"
)

// A file decision log is fsynced after every record, and a failed fsync
// is the record's error (so a break glass it concerns is refused).
func TestDecisionLogFsyncsEachRecord(t *testing.T) {
	l, closeLog, err := OpenDecisionLog(filepath.Join(t.TempDir(), "d.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	if l.sync == nil {
		t.Fatal("a file decision log is not fsynced")
	}
	syncs, fsync := 0, l.sync
	l.sync = func() error { syncs++; return fsync() }
	for i := range 3 {
		if err := l.Record(DecisionRecord{Action: "put", Result: "allow"}); err != nil {
			t.Fatal(err)
		}
		if syncs != i+1 {
			t.Fatalf("%d records, %d fsyncs", i+1, syncs)
		}
	}
	l.sync = func() error { return errors.New("EIO") }
	if err := l.Record(DecisionRecord{Action: "delete", Result: "allow", BreakGlass: true}); err == nil || l.Err() == nil {
		t.Fatalf("a failed fsync was not an error: %v", err)
	}
}
