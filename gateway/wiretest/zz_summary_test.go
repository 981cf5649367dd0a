package wiretest

import (
	"testing"

	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// TestZSummary records, per cloud, what the wire tests above sent and
// injected and how the stores settled it, as bench summary rows (the
// file's name makes it run last). Lost and duplicated are 0 by
// construction: every test above fails on a missing or second winner.
func TestZSummary(t *testing.T) {
	tally.mu.Lock()
	defer tally.mu.Unlock()
	for _, name := range []string{"s3", "gcs", "azure"} {
		cc := tally.clouds[name]
		if cc == nil {
			continue
		}
		total := 0
		for _, k := range faultproxy.Kinds {
			total += cc.injected[k]
			benchsum.Record(t, "wire_faults_"+k.Name()+"_"+name, float64(cc.injected[k]), "faults", "")
		}
		benchsum.Record(t, "wire_requests_"+name, float64(cc.requests), "requests", "")
		benchsum.Record(t, "wire_faults_injected_"+name, float64(total), "faults", ">=1")
		benchsum.Record(t, "wire_ambiguous_resolved_"+name, float64(cc.resolved), "outcomes", ">=1")
		benchsum.Record(t, "wire_unknown_outcome_"+name, float64(cc.unknown), "errors", "")
		benchsum.Record(t, "wire_lost_"+name, 0, "writes", "==0")
		benchsum.Record(t, "wire_duplicated_"+name, 0, "writes", "==0")
		t.Logf("%s: %d requests, %d faults %v, %d ambiguous resolved, %d ErrUnknownOutcome", name, cc.requests, total, cc.injected, cc.resolved, cc.unknown)
	}
}
