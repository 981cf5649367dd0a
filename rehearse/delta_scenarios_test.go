package rehearse_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/rehearse"
)

// TestRehearseDeltaSourceScenarios: on the demo, the query made to read a
// Delta table of its input is refused at restart when the table was
// replaced (both ids named) and reports the gap when the files it had not
// read were vacuumed, publishing nothing after either change.
func TestRehearseDeltaSourceScenarios(t *testing.T) {
	dir, s := demoDir(t)
	rep, err := rehearse.Run(context.Background(), s, options(dir, "source-table-replaced", "source-files-vacuumed"))
	if err != nil {
		t.Fatal(err)
	}
	logResults(t, rep)
	if len(rep.Scenarios) != 2 {
		t.Fatalf("%d scenarios ran", len(rep.Scenarios))
	}
	for _, r := range rep.Scenarios {
		if !r.OK {
			t.Errorf("%s failed: %s", r.Name, r.Detail)
		}
	}
	if d := rep.Scenarios[0].Detail; !strings.Contains(d, "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE") || !strings.Contains(d, "replaced it by table") {
		t.Errorf("source-table-replaced: %s", d)
	}
	if d := rep.Scenarios[1].Detail; !strings.Contains(d, "FAILED_READ_FILE.FILE_NOT_EXIST") || !strings.Contains(d, "earliest version") && !strings.Contains(d, "does not exist") {
		t.Errorf("source-files-vacuumed: %s", d)
	}
}
