package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
)

// childEnv makes the test binary run the CLI with its arguments instead of
// the tests: the process-kill test re-executes itself as `ckgate`.
const childEnv = "CKGATE_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// As main does: the first SIGINT or SIGTERM cancels the command.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		context.AfterFunc(ctx, stop)
		if os.Getenv(signalsReadyEnv) == "1" {
			fmt.Fprintln(os.Stderr, signalsReadyMessage) // see TestSIGTERMEndsRetention
		}
		code := Run(ctx, Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, append([]string{"ckgate"}, os.Args[1:]...))
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestRunSurvivesSIGKILL is the process-level crash soak: `ckgate run` on
// the demo clickstream (one file per batch) in a child process, SIGKILLed
// at random points (after a random number of batches, a random delay into
// the next) and restarted until a run completes, on every cell of
// {local disk, S3 on versitygw, S3 through ckgate serve} × {file sink,
// http sink, Delta sink}, and the cells where ckgate serve itself is
// SIGKILLed and restarted under the engine. The sink must then
// hold exactly the sessions a reference computed here from the events
// gives (lost = duplicated = 0), and the log must have no gap, no double
// entry and no writer epoch going down. CKGATE_SOAK_RUNS sets the runs per
// cell (default 2; `make soak` runs 50); CKGATE_SOAK_SEED replays a seed.
func TestRunSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI many times")
	}
	runs := soakRuns(t, 2)
	for _, sinkKind := range []string{"files", "http", "delta"} {
		t.Run("local/"+sinkKind, func(t *testing.T) {
			killSoak(t, runs, killCell{name: "local/" + sinkKind, sink: sinkKind})
		})
	}
	t.Run("serve", func(t *testing.T) {
		// The engine writing through the front door: ckgate serve over a
		// local dir, one per cell, the job principal's access key in the
		// children's environment.
		env := serveJobEnv(t)
		for _, sinkKind := range []string{"files", "http", "delta"} {
			t.Run(sinkKind, func(t *testing.T) {
				ep, _, _ := startServe(t)
				killSoak(t, runs, killCell{name: "serve/" + sinkKind, sink: sinkKind, maxDelay: 80 * time.Millisecond, env: env,
					root: serveRoot(ep)})
			})
		}
		// ckgate serve itself SIGKILLed at random points of the engine's
		// runs and started again: the engine sees the store unavailable
		// and is restarted like a killed one.
		for _, sinkKind := range []string{"http", "delta"} {
			t.Run("killed/"+sinkKind, func(t *testing.T) {
				srv := startServeProcess(t, serveCreds)
				killSoak(t, runs, killCell{name: "serve-killed/" + sinkKind, sink: sinkKind, maxDelay: 80 * time.Millisecond, env: env,
					root: serveRoot(srv.endpoint()), strike: srv.strike, transient: srv.transient})
				srv.proved()
			})
		}
	})
	t.Run("s3", func(t *testing.T) {
		emu := emulator.Versitygw(t)
		q := s3Query(emu, emu.Endpoint).Encode()
		for _, sinkKind := range []string{"files", "http", "delta"} {
			t.Run(sinkKind, func(t *testing.T) {
				b := bucketName()
				ckgate(t, Options{}, "", "store", "mb", "s3://"+b+"?"+q).want(t, 0)
				killSoak(t, runs, killCell{name: "s3/" + sinkKind, sink: sinkKind, maxDelay: 80 * time.Millisecond,
					root: func(run int, what string) string { return fmt.Sprintf("s3://%s/run-%d/%s?%s", b, run, what, q) }})
			})
		}
	})
}

// killCell is one cell of the SIGKILL matrix.
type killCell struct {
	name string
	sink string // files, http or delta
	// root returns the store URL of the checkpoint ("ck") or the file
	// sink's output ("out") of a run; nil: directories in the run's dir.
	root     func(run int, what string) string
	maxDelay time.Duration // longest delay after the chosen batch (default 30ms)
	env      []string      // added to each child's environment
	// transient reports whether a run that exited non-zero failed the way
	// the cell provokes (a store unavailable under wire faults): it is
	// restarted like a killed one. nil: every non-zero exit fails the test.
	transient func(c *child) bool
	// ended, when set, is told of every child once it is gone.
	ended func(c *child, killed bool)
	// strike, when set, is what a kill point does instead of SIGKILLing
	// the engine c: it strikes something else (the serve-killed cell:
	// ckgate serve), and the engine then finishes or fails (transient).
	strike func(c *child)
}

// killFigures are what a cell reports.
type killFigures struct {
	runs, kills, processes, lost, duplicated int
	resent                                   int // http sink: records sent again under their key (recognised by the receiver)
}

// add counts one run of killRun.
func (f *killFigures) add(kills, procs, lost, dup, resent int) {
	f.runs++
	f.kills += kills
	f.processes += procs
	f.lost += lost
	f.duplicated += dup
	f.resent += resent
}

func killSoak(t *testing.T, runs int, cell killCell) {
	seed := wireSeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	want := canonicalRows(t, demoSessions(t, 1, 10*time.Minute, 30*time.Minute))
	var f killFigures
	start := time.Now()
	defer func() {
		t.Logf("soak: cell=%s runs=%d kills=%d lost=%d duplicated=%d (%d processes, %d records re-sent under their key, %s)",
			cell.name, f.runs, f.kills, f.lost, f.duplicated, f.processes, f.resent, time.Since(start).Round(time.Second))
		soakReport(t, "test", "SIGKILL", "cell", cell.name, "runs", f.runs, "kills", f.kills, "lost", f.lost,
			"duplicated", f.duplicated, "processes", f.processes, "resent", f.resent, "seconds", int(time.Since(start).Seconds()))
	}()
	for run := range runs {
		kills, procs, lost, dup, resent := killRun(t, r, cell, run, want)
		f.add(kills, procs, lost, dup, resent)
		if lost+dup > 0 {
			t.Fatalf("run %d (seed %d): after %d kills the sink lost %d sessions and duplicated %d", run, seed, kills, lost, dup)
		}
	}
	if f.kills == 0 {
		t.Fatal("no run was killed: the test proves nothing")
	}
}

// killRun does one run of a cell: kills at random points, then a run to
// completion. It returns the kills, the processes started, the sink's
// lost and duplicated rows against want, and the records the http sink
// sent again under their key.
func killRun(t *testing.T, r *rand.Rand, cell killCell, run int, want []string) (kills, procs, lost, dup, resent int) {
	t.Helper()
	dir, sp := demoDir(t)
	src, err := os.ReadFile(sp)
	if err != nil {
		t.Fatal(err)
	}
	specText := strings.Replace(string(src), "max_files_per_batch: 4", "max_files_per_batch: 1", 1)
	ckURL, outURL := "demo/checkpoint", "demo/out/sessions"
	if cell.root != nil {
		ckURL, outURL = cell.root(run, "ck"), cell.root(run, "out")
	}
	var rc *effectReceiver
	switch {
	case cell.sink == "http":
		var u string
		rc, u = newEffectReceiver(t)
		specText = httpSinkSpec(specText, u)
		if !strings.Contains(specText, "kind: http") {
			t.Fatal("the demo spec's sink line changed: update httpSinkSpec")
		}
	case cell.sink == "delta":
		specText = deltaSinkSpec(specText, outURL)
	case cell.root != nil:
		specText = strings.Replace(specText, "path: demo/out/sessions", "path: '"+outURL+"'", 1)
	}
	if err := os.WriteFile(sp, []byte(specText), 0o644); err != nil {
		t.Fatal(err)
	}
	maxDelay := cell.maxDelay
	if maxDelay == 0 {
		maxDelay = 30 * time.Millisecond
	}
	planned := 1 + r.IntN(4)
	var outputs strings.Builder
	done := false
	for attempt := 0; !done; attempt++ {
		if attempt > 60 {
			t.Fatalf("run %d: no run completed after %d kills\n%s", run, kills, outputs.String())
		}
		c := startChild(t, dir, cell.env, "run", "--checkpoint", ckURL, "--available-now", "--format", "json", sp)
		procs++
		if attempt < planned {
			// Kill after a random number of batches (0: while it opens
			// and restores) and a random delay into the next one.
			batches, delay := r.IntN(10), time.Duration(r.Int64N(int64(maxDelay)))
			switch {
			case cell.strike != nil:
				if reach(c, batches, delay) {
					kills++
					cell.strike(c)
				}
				c.wait(t, 5*time.Minute)
			case killAt(c, batches, delay):
				kills++
				outputs.WriteString(c.output())
				if cell.ended != nil {
					cell.ended(c, true)
				}
				continue
			}
		} else {
			c.wait(t, 5*time.Minute)
		}
		outputs.WriteString(c.output())
		if cell.ended != nil {
			cell.ended(c, false)
		}
		if c.code() != 0 && cell.transient != nil && cell.transient(c) {
			continue
		}
		if c.code() != 0 {
			t.Fatalf("run %d attempt %d: ckgate run exited %d\n%s", run, attempt, c.code(), c.output())
		}
		done = true
	}
	if strings.Contains(outputs.String(), leaseWaitMessage) {
		t.Fatalf("run %d: a restart after SIGKILL waited for the dead writer's lease:\n%s", run, outputs.String())
	}

	ctx := context.Background()
	open := func(raw string) gateway.Store {
		if !strings.Contains(raw, "://") {
			raw = filepath.Join(dir, raw)
		}
		st, err := stores.Open(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gateway.Close(st) })
		return st
	}
	ck := open(ckURL)
	checkLog(t, ck, true)
	var got []string
	if rc != nil {
		rows, deliveries, conflicts, bad := rc.effects()
		if len(conflicts) > 0 || bad > 0 {
			t.Fatalf("run %d: the receiver saw %d conflicting records (one key, two records) and %d bad requests: %v",
				run, len(conflicts), bad, conflicts)
		}
		if ledgerKeys(t, ck) == 0 {
			t.Fatalf("run %d: the http sink kept no ledger", run)
		}
		resent = deliveries - len(rows)
		got = rows
	} else if cell.sink == "delta" {
		got = canonicalRows(t, deltaSinkRows(t, open(outURL)))
	} else {
		got = canonicalRows(t, fileSinkRows(t, open(outURL)))
	}
	lost, dup = compareRows(got, want)
	return kills, procs, lost, dup, resent
}

// killAt waits for n progress lines of c and then for delay, and kills c
// with SIGKILL. It reports whether the signal ended c (false: c exited on
// its own first).
func killAt(c *child, n int, delay time.Duration) bool {
	return reach(c, n, delay) && c.kill()
}

// reach waits for n progress lines of c and then for delay. It reports
// whether c still runs (false: it exited first).
func reach(c *child, n int, delay time.Duration) bool {
	for seen := 0; seen < n; {
		select {
		case <-c.progress:
			seen++
		case <-c.exited:
			return false
		}
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-c.exited:
		return false
	case <-timer.C:
	}
	return true
}

// demoSessions computes the demo query's output from the clickstream:
// batches of perBatch files, late events (at or below the batch watermark)
// dropped, health checks filtered, sessions by user with the gap, emitted
// when they end at or before the final watermark.
func demoSessions(t *testing.T, perBatch int, delay, gap time.Duration) []string {
	t.Helper()
	files := demo.Files(demo.Default())
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	type ev struct {
		user   string
		ts     int64
		amount int64
	}
	var wm int64
	var kept []ev
	for b := 0; b*perBatch < len(names); b++ {
		maxTS := int64(-1)
		for _, n := range names[b*perBatch : min(len(names), (b+1)*perBatch)] {
			for l := range strings.SplitSeq(strings.TrimSpace(string(files[n])), "\n") {
				var e struct {
					UserID string `json:"user_id"`
					TS     any    `json:"ts"`
					Page   string `json:"page"`
					Amount int64  `json:"amount"`
				}
				if err := json.Unmarshal([]byte(l), &e); err != nil {
					t.Fatal(err)
				}
				var ts int64
				switch v := e.TS.(type) {
				case float64:
					ts = int64(v)
				case string:
					tm, err := time.Parse(time.RFC3339Nano, v)
					if err != nil {
						t.Fatal(err)
					}
					ts = tm.UnixMilli()
				}
				maxTS = max(maxTS, ts)
				if e.Page == "health" || ts <= wm {
					continue
				}
				kept = append(kept, ev{e.UserID, ts, e.Amount})
			}
		}
		if maxTS >= 0 {
			wm = max(wm, maxTS-delay.Milliseconds())
		}
	}
	byUser := map[string][]ev{}
	for _, e := range kept {
		byUser[e.user] = append(byUser[e.user], e)
	}
	fmtT := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00") }
	var out []string
	for u, es := range byUser {
		sort.SliceStable(es, func(i, j int) bool { return es[i].ts < es[j].ts })
		for i := 0; i < len(es); {
			j, sum := i+1, es[i].amount
			for j < len(es) && es[j].ts < es[j-1].ts+gap.Milliseconds() {
				sum += es[j].amount
				j++
			}
			if end := es[j-1].ts + gap.Milliseconds(); end <= wm {
				out = append(out, fmt.Sprintf(`{"user_id":%q,"window_start":%q,"window_end":%q,"count":%d,"sum_amount":%d}`,
					u, fmtT(es[i].ts), fmtT(end), j-i, sum))
			}
			i = j
		}
	}
	sort.Strings(out)
	return out
}
