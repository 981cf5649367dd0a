package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// wireTryTimeout is the try_timeout the wire-fault cells put in their
// store URLs; the Delay fault holds answers past it.
const wireTryTimeout = "1s"

// wireFaultRate is the share of store requests the wire-fault cells fault.
const wireFaultRate = 0.05

// TestRunSurvivesWireFaultsAndSIGKILL is the SIGKILL matrix with the
// checkpoint store on each cloud's emulator reached through a fault proxy
// that faults 5% of the requests (seeded; every kind: responses dropped
// after the server applied the request, resets before and after, 500 and
// 503 with the provider's bodies, answers held past try_timeout, bodies cut
// short, requests sent twice), with the SDKs' own retries on, SIGKILLs on
// top, and each run twice: with the http sink (its ledger in the same
// store) and with the Delta sink writing its table on the same cloud through
// the proxy. The reconciliation is
// the matrix's: 0 lost, 0 duplicated, the log without gap or double entry.
// A run may end on a store error the faults caused (unavailable, or the
// outcome of a write unknown): it is restarted like a killed one, and
// counted. CKGATE_SOAK_WIRE_RUNS sets the runs per cell, each with both
// sinks (default 1; `make soak` runs SOAK_WIRE_RUNS, enough for its goal of
// 500 faults per cloud).
func TestRunSurvivesWireFaultsAndSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI many times")
	}
	runs := wireRuns(t)
	for _, cl := range wireClouds {
		t.Run(cl.name, func(t *testing.T) {
			wc := cl.start(t)
			seed := wireSeed(t)
			r := rand.New(rand.NewPCG(seed, 2))
			p := wireProxy(t, wc, seed)
			bucket := wc.bucket(t, p.URL(), bucketName())
			ckgate(t, Options{}, "", "store", "mb", bucket.mb).want(t, 0)
			p.SetRules(wireFaultRules()...)
			f := &wireFigures{}
			count := f.ended(p)
			ended := func(c *child, killed bool) {
				count(c, killed)
				if !killed && c.code() == 0 {
					p.SetRules() // the run is done: the reconciliation reads the store without faults
				}
			}
			cell := func(sink string) killCell {
				return killCell{name: "wire/" + cl.name + "/" + sink, sink: sink, maxDelay: 80 * time.Millisecond, env: bucket.env,
					root: bucket.root,
					transient: func(c *child) bool {
						out := c.output()
						return c.code() == ExitFailure && (strings.Contains(out, ": unavailable") || strings.Contains(out, ": outcome unknown"))
					},
					ended: ended}
			}
			start := time.Now()
			var kf killFigures
			for run := range 2 * runs { // each run with the http sink (and its ledger) and with the Delta sink, on the cloud
				sink := []string{"http", "delta"}[run%2]
				p.SetRules(wireFaultRules()...)
				kills, procs, lost, dup, resent := killRun(t, r, cell(sink), run, wireWant(t))
				kf.add(kills, procs, lost, dup, resent)
				if lost+dup > 0 {
					t.Fatalf("run %d (%s sink): after %d kills and %d faults the sink lost %d sessions and duplicated %d", run, sink, kills, len(p.Events()), lost, dup)
				}
			}
			f.report(t, cl.name, p, kf, time.Since(start))
		})
	}
}

// wireFaultRules fault wireFaultRate of the conditional requests (the ones
// whose outcome a lost answer makes ambiguous) and of the rest, with every
// kind; the rule names tell the two apart in the events.
func wireFaultRules() []*faultproxy.Rule {
	return []*faultproxy.Rule{
		{Name: "conditional", Match: conditionalRequest, Prob: wireFaultRate, Faults: faultproxy.Kinds, Delay: 5 * time.Second},
		{Name: "other", Prob: wireFaultRate, Faults: faultproxy.Kinds, Delay: 5 * time.Second},
	}
}

// conditionalRequest tells a conditional write or delete on any of the
// three clouds: If-None-Match / If-Match headers (S3, Azure) or GCS's
// ifGenerationMatch parameter.
func conditionalRequest(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	return r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Match") != "" || r.URL.Query().Has("ifGenerationMatch")
}

// wireSeed is the seed of a soak (the SIGKILL points, the proxy's faults):
// CKGATE_SOAK_SEED, else the clock; logged so a run replays.
func wireSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CKGATE_SOAK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CKGATE_SOAK_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (CKGATE_SOAK_SEED replays it)", seed)
	return seed
}

var (
	wireWantOnce sync.Once
	wireWantRows []string
)

// wireWant is the reference output of the demo query, computed once.
func wireWant(t *testing.T) []string {
	wireWantOnce.Do(func() { wireWantRows = canonicalRows(t, demoSessions(t, 1, 10*time.Minute, 30*time.Minute)) })
	return wireWantRows
}

// wireCloud is one emulator the cells put a proxy in front of.
type wireCloud struct {
	target      string
	provider    faultproxy.Provider
	rewriteHost bool
	// bucket returns the URLs of bucket name reached through base (the
	// proxy, or target itself) and points the environment at base.
	bucket func(t *testing.T, base, name string) wireBucket
}

// wireBucket is where a cell's runs keep their checkpoints.
type wireBucket struct {
	mb   string                            // the URL store mb makes
	root func(run int, what string) string // see killCell.root
	env  []string                          // the children's environment
}

// wireClouds are the clouds the wire-fault tests run on, each on its
// emulator.
var wireClouds = []struct {
	name  string
	start func(t *testing.T) wireCloud
}{{"s3", wireS3}, {"gcs", wireGCS}, {"azure", wireAzure}}

// wireProxy starts the fault proxy (no rules yet) in front of wc's
// emulator, closed when the test ends.
func wireProxy(t *testing.T, wc wireCloud, seed uint64) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(faultproxy.Options{Target: wc.target, Provider: wc.provider, RewriteHost: wc.rewriteHost, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func wireS3(t *testing.T) wireCloud {
	emu := emulator.Versitygw(t)
	return wireCloud{target: emu.Endpoint, provider: faultproxy.S3, bucket: func(t *testing.T, base, b string) wireBucket {
		q := wireS3Query(emu, base)
		return wireBucket{mb: "s3://" + b + "?" + q,
			root: func(run int, what string) string { return fmt.Sprintf("s3://%s/run-%d/%s?%s", b, run, what, q) }}
	}}
}

// wireS3Query is the URL query that reaches emu through endpoint (the
// proxy) with the short per-try timeout of the wire-fault runs.
func wireS3Query(emu *emulator.S3Emulator, endpoint string) string {
	q := s3Query(emu, endpoint)
	q.Set("try_timeout", wireTryTimeout)
	return q.Encode()
}

func wireGCS(t *testing.T) wireCloud {
	emu := emulator.FakeGCS(t)
	return wireCloud{target: "http://" + emu.Host, provider: faultproxy.GCS, rewriteHost: true, bucket: func(t *testing.T, base, b string) wireBucket {
		// The children and this process's reconciliation both go through
		// the proxy (the rules are off by then).
		t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(base, "http://"))
		q := "try_timeout=" + wireTryTimeout
		return wireBucket{mb: "gs://" + b + "?project=ckgate-test&" + q,
			root: func(run int, what string) string { return fmt.Sprintf("gs://%s/run-%d/%s?%s", b, run, what, q) }}
	}}
}

func wireAzure(t *testing.T) wireCloud {
	emu := emulator.Azurite(t)
	return wireCloud{target: strings.TrimSuffix(emu.ServiceURL, "/"+emu.Account), provider: faultproxy.Azure,
		bucket: func(t *testing.T, base, c string) wireBucket {
			q := url.Values{"endpoint": {base + "/" + emu.Account}, "try_timeout": {wireTryTimeout}}.Encode()
			return wireBucket{mb: "az://" + emu.Account + "/" + c + "?" + q,
				root: func(run int, what string) string {
					return fmt.Sprintf("az://%s/%s/run-%d/%s?%s", emu.Account, c, run, what, q)
				}}
		}}
}
