package lifecycle_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

// FuzzParsePlanFile decodes fuzzed plan files: never a panic, a refusal
// names the file, and an accepted plan names each valid key once with a
// reason, its removed bytes the sum of the planned sizes.
func FuzzParsePlanFile(f *testing.F) {
	f.Add([]byte(`{"kind":"ckgate-retention-plan","version":1,"policy":{"min_batches":2,"retain_for_ms":0,"log_retention_ms":1},"checkpoint":{"url":"ck","location":"file:///ck","query_id":"q","latest_offsets_batch":3,"latest_commit_batch":3,"retain_from":2,"remove":[{"key":"offsets/0","size":5,"version":"v1","reason":"old"}],"removed_bytes":5}}`))
	f.Add([]byte(`{"kind":"ckgate-retention-plan","version":1,"policy":{"min_batches":1,"log_retention_ms":1},"checkpoint":{"url":"ck","location":"a","remove":[]},"sinks":[{"url":"out","location":"a","remove":[]}]}`))
	f.Add([]byte(`{"kind":"ckgate-retention-plan","version":1,"policy":{"min_batches":1,"log_retention_ms":1},"checkpoint":{"url":"ck","location":"a","remove":[{"key":"../x","size":1,"reason":"r"}],"removed_bytes":1}}`))
	f.Add([]byte(`{"kind":"x"}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := lifecycle.ParsePlanFile("plan.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "plan.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, tg := range append([]lifecycle.PlanTarget{pf.Checkpoint}, pf.Sinks...) {
			seen := map[string]bool{}
			var sum int64
			for _, p := range tg.Remove {
				if seen[p.Key] || gateway.ValidateKey("delete", p.Key) != nil || p.Reason == "" || p.Size < 0 {
					t.Fatalf("accepted %+v", p)
				}
				seen[p.Key] = true
				sum += p.Size
			}
			if r := tg.Result(); len(r.Remove) != len(tg.Remove) || r.RemovedBytes != sum {
				t.Fatalf("result %+v of %+v", r, tg)
			}
		}
	})
}
