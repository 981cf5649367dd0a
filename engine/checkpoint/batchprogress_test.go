package checkpoint

import (
	"strings"
	"testing"
)

// TestCommitProgressRoundTrip: ckgateProgress survives encode and decode
// beside the fields Spark reads, and Spark's own first bytes stay first.
func TestCommitProgressRoundTrip(t *testing.T) {
	c := CommitMetadata{Version: 1, NextBatchWatermarkMs: 11000, Epoch: 3, Progress: &BatchProgress{
		InputRows: 40, OutputRows: 7, LateRowsDropped: 2, LateRowsAccepted: 1, StateRows: 12,
		DurationMs: map[string]int64{"addBatch": 5, "walCommit": 2}, StartedMs: 1700000000000}}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "v1\n{\"nextBatchWatermarkMs\":11000,") || strings.Count(string(data), "\n") != 1 {
		t.Fatalf("encoded %q: Spark reads the first line as the version and the second as JSON", data)
	}
	got, err := DecodeCommit(data)
	if err != nil {
		t.Fatal(err)
	}
	p := got.Progress
	if p == nil || p.InputRows != 40 || p.LateRowsAccepted != 1 || p.StateRows != 12 || p.Elapsed().Milliseconds() != 7 || got.NextBatchWatermarkMs != 11000 || got.Epoch != 3 {
		t.Fatalf("decoded %+v progress %+v", got, p)
	}
}

// TestCommitProgressIgnoredWhenMalformed: Spark ignores the field, so a
// value of another shape leaves the commit readable (no progress), never
// corrupt.
func TestCommitProgressIgnoredWhenMalformed(t *testing.T) {
	for _, body := range []string{`"x"`, `[1,2]`, `{"inputRows":"many"}`, `null`} {
		c, err := DecodeCommit([]byte(`v1` + "\n" + `{"nextBatchWatermarkMs":5,"ckgateProgress":` + body + `}`))
		if err != nil {
			t.Fatalf("ckgateProgress %s: %v", body, err)
		}
		if c.Progress != nil || c.NextBatchWatermarkMs != 5 {
			t.Fatalf("ckgateProgress %s: %+v", body, c)
		}
	}
}
