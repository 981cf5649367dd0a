package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/faultproxy"
	"github.com/ckgate/ckgate/validate"
)

// TestValidateAccessUnderWireFaults runs validate-access on each cloud
// through the fault proxy, with the SDKs' own retries and try_timeout:
//
//   - every answer to a probe write lost after the server applied it: the
//     write probe fails as unavailable (never as a permission or not-found
//     failure), and the keys the lost writes created are removed all the
//     same;
//   - a quarter of all requests faulted, every kind: whatever fails is
//     unavailable or an unknown outcome, never permission, not found,
//     exists or precondition.
//
// After each run the backend is listed directly (not through the proxy):
// no probe key is left.
func TestValidateAccessUnderWireFaults(t *testing.T) {
	for _, cl := range wireClouds {
		t.Run(cl.name, func(t *testing.T) {
			wc := cl.start(t)
			p := wireProxy(t, wc, wireSeed(t))
			name := bucketName()
			ckgate(t, Options{}, "", "store", "mb", wc.bucket(t, p.URL(), name).mb).want(t, 0)

			t.Run("every probe write answer lost", func(t *testing.T) {
				p.SetRules(&faultproxy.Rule{Name: "writes", Match: probeWrite, Faults: []faultproxy.Kind{faultproxy.DropResponse}})
				rep, code := validateThrough(t, wc, p, name, 0)
				if code != ExitFailure {
					t.Fatalf("exit %d, want 1 (the write probe fails)", code)
				}
				put := findResult(rep, validate.LayerAuthorization, validate.OpPut)
				if put == nil || put.Result != validate.Fail || put.Kind != "unavailable" {
					t.Fatalf("authorization/put = %+v, want a failure of kind unavailable", put)
				}
				if n := p.Counts()[faultproxy.DropResponse]; n == 0 {
					t.Fatal("no answer was dropped")
				}
			})
			t.Run("the first eight deletes answered busy", func(t *testing.T) {
				// More than one delete's SDK retries (S3 3 attempts,
				// Azure 4, GCS's unconditional delete 1): the cleanup
				// itself must try again.
				p.SetRules(&faultproxy.Rule{Name: "deletes", Method: http.MethodDelete, Max: 8, Faults: []faultproxy.Kind{faultproxy.Busy}})
				rep, _ := validateThrough(t, wc, p, name, 9)
				if res := findResult(rep, validate.LayerCleanup, validate.OpRemove); res == nil || res.Result != validate.Pass {
					t.Fatalf("cleanup = %+v, want pass", res)
				}
			})
			t.Run("a quarter of all requests faulted", func(t *testing.T) {
				for run := range 3 {
					p.SetRules(&faultproxy.Rule{Name: "all", Prob: 0.25, Faults: faultproxy.Kinds, Delay: 5 * time.Second})
					validateThrough(t, wc, p, name, run+1)
				}
			})
			t.Logf("%d requests, faults %v", p.Requests(), p.Counts())
		})
	}
}

// validateThrough runs validate-access on run's prefix of bucket name
// through p, checks that every failure is unavailable or an unknown
// outcome and that no probe key is left (listing the backend directly),
// and returns the report and the exit status.
func validateThrough(t *testing.T, wc wireCloud, p *faultproxy.Proxy, name string, run int) (*validate.Report, int) {
	t.Helper()
	via := wc.bucket(t, p.URL(), name)
	r := ckgate(t, Options{}, "", "validate-access", "--format", "json", "--timeout", "40s", via.root(run, "ck"))
	if r.code != ExitOK && r.code != ExitFailure {
		t.Fatalf("exit %d, want 0 or 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var rep validate.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	for _, res := range rep.Results {
		if res.Result != validate.Fail {
			continue
		}
		if res.Kind != "unavailable" && res.Kind != "unknown_outcome" {
			t.Errorf("%s/%s failed as %q (%s %s): under wire faults a failure is unavailable or an unknown outcome",
				res.Layer, res.Operation, res.Kind, res.Code, res.Message)
		}
	}
	// The rules off, the environment pointed at the emulator itself.
	p.SetRules()
	direct := wc.bucket(t, wc.target, name)
	st, err := stores.Open(context.Background(), direct.root(run, "ck"))
	if err != nil {
		t.Fatal(err)
	}
	for a, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatalf("list the backend: %v", err)
		}
		t.Errorf("%s is left on the backend after validate-access under faults", a.Key)
	}
	gateway.Close(st)
	wc.bucket(t, p.URL(), name)
	return &rep, r.code
}

// probeWrite tells a probe's object write: a PUT under _ckgate/preflight/
// (S3, Azure) or an upload (GCS, which names the object in the body).
func probeWrite(r *http.Request) bool {
	return (r.Method == http.MethodPut && strings.Contains(r.URL.Path, "preflight")) ||
		(r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/"))
}

func findResult(rep *validate.Report, layer validate.Layer, op string) *validate.Result {
	for i := range rep.Results {
		if rep.Results[i].Layer == layer && rep.Results[i].Operation == op {
			return &rep.Results[i]
		}
	}
	return nil
}
