package rehearse_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/rehearse"
)

// demoDir lays out what `make demo` uses in a temporary directory (the
// clickstream under demo/clickstream) and returns it with the demo spec,
// whose relative paths resolve against it.
func demoDir(t *testing.T) (string, *spec.Spec) {
	t.Helper()
	dir := t.TempDir()
	if _, err := demo.Write(filepath.Join(dir, "demo", "clickstream"), demo.Default()); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(filepath.Join("..", "testdata", "specs", "clickstream-sessions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, s
}

func registry() *gateway.Registry {
	return gateway.NewRegistry().Register("file", filestore.Open)
}

func options(dir string, scenarios ...string) rehearse.Options {
	return rehearse.Options{Registry: registry(), BaseDir: dir, Seed: 7, Workdir: filepath.Join(dir, "work"), Scenarios: scenarios}
}

func logResults(t *testing.T, rep *rehearse.Report) {
	t.Helper()
	for _, r := range rep.Scenarios {
		t.Logf("%-24s ok=%v in=%d out=%d lost=%d dup=%d late=%d accepted=%d state %d→%d\n    %s", r.Name, r.OK, r.RowsIn, r.RowsOut,
			r.Lost, r.Duplicated, r.LateDropped, r.LateAccepted, r.StateRowsBefore, r.StateRowsAfter, r.Detail)
	}
}

// checkAllPass runs every scenario and checks each passed with real figures.
func checkAllPass(t *testing.T, rep *rehearse.Report) {
	t.Helper()
	logResults(t, rep)
	if len(rep.Scenarios) != len(rehearse.Scenarios()) {
		t.Fatalf("%d scenarios ran, want %d", len(rep.Scenarios), len(rehearse.Scenarios()))
	}
	ref := rep.Reference
	if ref.RowsOut == 0 || ref.LateDropped == 0 || ref.Batches < 4 {
		t.Fatalf("weak demo: %+v", ref)
	}
	for _, r := range rep.Scenarios {
		if !r.OK || r.Lost != 0 || r.Duplicated != 0 {
			t.Errorf("%s failed: %s", r.Name, r.Detail)
		}
		if strings.HasPrefix(r.Name, "source-") {
			continue // the Delta source drills stop at a refused restart: nothing to reconcile
		}
		if r.RowsIn < ref.RowsIn || r.RowsOut != ref.RowsOut || r.StateRowsAfter != ref.StateRows {
			t.Errorf("%s: %d rows in, %d out, %d state rows; the reference %d, %d, %d", r.Name, r.RowsIn, r.RowsOut, r.StateRowsAfter,
				ref.RowsIn, ref.RowsOut, ref.StateRows)
		}
		if r.Name == "late-events" {
			if r.LateDropped <= ref.LateDropped || r.LateAccepted < 5 {
				t.Errorf("late-events: %d late dropped (the plain input %d), %d accepted: the injected rows did not count", r.LateDropped, ref.LateDropped, r.LateAccepted)
			}
		} else if r.LateDropped != ref.LateDropped {
			t.Errorf("%s: %d late rows dropped, the reference %d", r.Name, r.LateDropped, ref.LateDropped)
		}
	}
	if !rep.OK || rep.Failed() != 0 {
		t.Fatal("the report is not ok")
	}
}

func TestRehearseDemoFilesSink(t *testing.T) {
	dir, s := demoDir(t)
	rep, err := rehearse.Run(context.Background(), s, options(dir))
	if err != nil {
		t.Fatal(err)
	}
	checkAllPass(t, rep)
	for _, r := range rep.Scenarios {
		if r.Name == "stale-checkpoint" && !strings.Contains(r.Detail, "skipped by the sink's manifest") {
			t.Errorf("stale-checkpoint did not re-run batches against the sink: %s", r.Detail)
		}
		if r.Name == "second-writer" && (!strings.Contains(r.Detail, "refused") || !strings.Contains(r.Detail, "fenced")) {
			t.Errorf("second-writer: %s", r.Detail)
		}
	}
}

// TestRehearseDemoHTTPSink redirects an http sink to the in-process
// receiver: the production endpoint is never called.
func TestRehearseDemoHTTPSink(t *testing.T) {
	dir, s := demoDir(t)
	var hits atomic.Int64
	prod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer prod.Close()
	s.Sink = spec.Sink{Kind: spec.SinkHTTP, URL: prod.URL, Headers: map[string]string{"Authorization": "Bearer prod"}, BatchSize: 20,
		Timeout: spec.Duration(10 * time.Second)}
	rep, err := rehearse.Run(context.Background(), s, options(dir))
	if err != nil {
		t.Fatal(err)
	}
	checkAllPass(t, rep)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the production endpoint got %d requests", n)
	}
	for _, r := range rep.Scenarios {
		if r.Name == "crash-after-sink-write" && !strings.Contains(r.Detail, "re-deliveries recognised by key") {
			t.Errorf("%s: %s", r.Name, r.Detail)
		}
	}
}

// TestRehearseCatchesLossAndDuplicate tampers with the drill's sink before
// reconciliation: one row removed, another written twice. Reconciliation
// must report exactly that, and the scenario and the report must fail.
func TestRehearseCatchesLossAndDuplicate(t *testing.T) {
	dir, s := demoDir(t)
	o := options(dir, "crash-before-commit")
	var tampered string
	o.BeforeReconcile = func(ctx context.Context, scenario string, st gateway.Store) error {
		files, _, err := checkpoint.ReadFileSinkLog(ctx, st, checkpoint.SinkMetadataDir)
		if err != nil {
			return err
		}
		for _, f := range files {
			key := filepath.Base(f.Path)
			data, _, err := st.Get(ctx, key)
			if err != nil {
				return err
			}
			rows := strings.SplitAfter(strings.TrimSpace(string(data)), "\n")
			if len(rows) < 2 {
				continue
			}
			// lose rows[0], duplicate rows[1]
			out := strings.Join(rows[1:], "") + "\n" + strings.TrimSpace(rows[1]) + "\n"
			if err := os.WriteFile(filepath.Join(dir, "work", scenario, "sink", key), []byte(out), 0o644); err != nil {
				return err
			}
			tampered = key
			return nil
		}
		return errors.New("no sink file with two rows")
	}
	rep, err := rehearse.Run(context.Background(), s, o)
	if err != nil {
		t.Fatal(err)
	}
	logResults(t, rep)
	r := rep.Scenarios[0]
	if tampered == "" || r.OK || rep.OK || r.Lost != 1 || r.Duplicated != 1 {
		t.Fatalf("after removing one row and doubling another in %s: ok=%v lost=%d duplicated=%d, report ok=%v", tampered, r.OK, r.Lost, r.Duplicated, rep.OK)
	}
	if !strings.Contains(r.Detail, "1 lost, 1 duplicated") {
		t.Fatalf("detail: %s", r.Detail)
	}
}

func TestRehearseReconcile(t *testing.T) {
	keys := []string{"user_id", "window_start", "window_end"}
	a := `{"user_id":"u1","window_start":"s1","window_end":"e1","count":2}`
	a2 := `{"count":2,"window_end":"e1","window_start":"s1","user_id":"u1"}` // same row, other field order
	b := `{"user_id":"u2","window_start":"s1","window_end":"e1","count":1}`
	bWrong := `{"user_id":"u2","window_start":"s1","window_end":"e1","count":2}`
	c := `{"user_id":"u3","window_start":"s1","window_end":"e1","count":5}`
	for _, tc := range []struct {
		name                     string
		ref, drill               []string
		lost, dup, copies, alien int64
	}{
		{"same", []string{a, b}, []string{a2, b}, 0, 0, 0, 0},
		{"lost", []string{a, b}, []string{a}, 1, 0, 0, 0},
		{"extra copy", []string{a, b}, []string{a, b, a2}, 0, 1, 1, 0},
		{"wrong value", []string{a, b}, []string{a, bWrong}, 1, 1, 0, 1},
		{"foreign key", []string{a}, []string{a, c}, 0, 1, 0, 1},
		{"a copy in the reference too", []string{a, a}, []string{a}, 1, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := rehearse.Reconcile(tc.ref, tc.drill, keys)
			if err != nil {
				t.Fatal(err)
			}
			if d.Lost != tc.lost || d.Duplicated != tc.dup || d.ExtraCopies != tc.copies || d.Foreign != tc.alien || d.OK() != (tc.lost+tc.dup == 0) {
				t.Fatalf("%+v, want lost %d duplicated %d (copies %d, foreign %d)", d, tc.lost, tc.dup, tc.copies, tc.alien)
			}
		})
	}
	if _, err := rehearse.Reconcile([]string{"not json"}, nil, nil); err == nil {
		t.Fatal("a row that is not JSON reconciled")
	}
}

// treeHash hashes every file under dir (path and content).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		fi, _ := e.Info()
		lines = append(lines, fmt.Sprintf("%s %s %v", rel, hex.EncodeToString(sum[:]), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return fmt.Sprintf("%d files %x", len(lines), sum)
}

// TestRehearseLeavesProductionUnchanged runs the production query for a
// few batches, then rehearses: the production checkpoint, sink and input
// are byte for byte (and mtime for mtime) what they were, and the
// checkpoint was archived into the work directory.
func TestRehearseLeavesProductionUnchanged(t *testing.T) {
	ctx := context.Background()
	dir, s := demoDir(t)
	cpDir := filepath.Join(dir, "checkpoints", s.Name)
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp, err := filestore.New(cpDir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := engine.Open(ctx, s, engine.Options{Checkpoint: cp, Registry: registry(), BaseDir: dir,
		Session: gateway.SessionOptions{Principal: "prod", Heartbeat: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Run(ctx, engine.Trigger{MaxBatches: 3}, nil); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, p := range []string{"checkpoints", "demo"} {
		before[p] = treeHash(t, filepath.Join(dir, p))
	}
	rep, err := rehearse.Run(ctx, s, options(dir, "crash-before-commit", "stale-checkpoint", "second-writer"))
	if err != nil {
		t.Fatal(err)
	}
	logResults(t, rep)
	if !rep.OK {
		t.Fatal("rehearse failed")
	}
	if p := rep.Production; !p.Found || p.Files == 0 || p.Archive == "" || !strings.HasPrefix(p.Archive, filepath.Join(dir, "work")) {
		t.Fatalf("production: %+v", p)
	}
	for p, h := range before {
		if got := treeHash(t, filepath.Join(dir, p)); got != h {
			t.Errorf("%s changed: %s, then %s", p, h, got)
		}
	}
}

func TestRehearseSetupErrors(t *testing.T) {
	dir, s := demoDir(t)
	ctx := context.Background()
	rate := *s
	rate.Source = spec.Source{Kind: spec.SourceRate, RowsPerSecond: 10}
	console := *s
	console.Sink = spec.Sink{Kind: spec.SinkConsole}
	missing := *s
	missing.Source.Path = filepath.Join(dir, "nope")
	if err := os.MkdirAll(filepath.Join(dir, "busy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "busy", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    *spec.Spec
		o    func(*rehearse.Options)
		msg  string
	}{
		{"rate source", &rate, nil, "--input"},
		{"console sink", &console, nil, "console"},
		{"missing input", &missing, nil, "nope"},
		{"busy workdir", s, func(o *rehearse.Options) { o.Workdir = filepath.Join(dir, "busy") }, "not empty"},
		{"unknown scenario", s, func(o *rehearse.Options) { o.Scenarios = []string{"99"} }, "unknown scenario"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(dir)
			if tc.o != nil {
				tc.o(&o)
			}
			_, err := rehearse.Run(ctx, tc.s, o)
			if !errors.Is(err, rehearse.ErrSetup) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want ErrSetup mentioning %q", err, tc.msg)
			}
		})
	}
}

// TestRehearseInputReplacesSource rehearses a Kafka query on files that
// hold the rows its topic delivers.
func TestRehearseInputReplacesSource(t *testing.T) {
	dir, s := demoDir(t)
	k := *s
	k.Source = spec.Source{Kind: spec.SourceKafka, Brokers: []string{"127.0.0.1:1"}, Topic: "clicks"}
	k.Source.MaxFilesPerBatch = 4
	o := options(dir, "1", "crash-before-commit")
	o.Input = filepath.Join("demo", "clickstream")
	rep, err := rehearse.Run(context.Background(), &k, o)
	if err != nil {
		t.Fatal(err)
	}
	logResults(t, rep)
	if !rep.OK || len(rep.Scenarios) != 2 || rep.Scenarios[0].Name != "crash-after-offsets" {
		t.Fatalf("report: ok=%v, %d scenarios", rep.OK, len(rep.Scenarios))
	}
}

// TestRehearseOtherOperators rehearses a crash and late input on the other
// operator kinds and output modes: the business key changes with them.
func TestRehearseOtherOperators(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   spec.Operator
		mode string
	}{
		{"none", spec.Operator{Kind: spec.OpNone}, spec.Append},
		{"dedup", spec.Operator{Kind: spec.OpDedup, Keys: []string{"event_id"}}, spec.Append},
		{"tumbling update", spec.Operator{Kind: spec.OpTumbling, Keys: []string{"page"}, Size: spec.Duration(10 * time.Minute),
			Aggregates: []spec.Aggregate{{Func: spec.AggCount}, {Func: spec.AggSum, Field: "amount"}}}, spec.Update},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, s := demoDir(t)
			s.Operator, s.OutputMode = tc.op, tc.mode
			rep, err := rehearse.Run(context.Background(), s, options(dir, "crash-before-commit", "late-events"))
			if err != nil {
				t.Fatal(err)
			}
			logResults(t, rep)
			for _, r := range rep.Scenarios {
				if !r.OK || r.RowsOut == 0 {
					t.Errorf("%s: ok=%v, %d rows out: %s", r.Name, r.OK, r.RowsOut, r.Detail)
				}
			}
		})
	}
}
