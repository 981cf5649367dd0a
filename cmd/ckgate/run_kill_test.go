package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// childEnv makes the test binary run the CLI with its arguments instead of
// the tests: the process-kill test re-executes itself as `ckgate`.
const childEnv = "CKGATE_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Run(context.Background(), Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, append([]string{"ckgate"}, os.Args[1:]...)))
	}
	os.Exit(m.Run())
}

// TestRunSurvivesSIGKILL starts `ckgate run` on the demo clickstream (one
// file per batch) and kills it with SIGKILL at random moments, restarting
// it each time, until a run completes. The sink must then hold exactly the
// sessions a reference computed here from the events gives: no session
// lost, none twice, late events dropped as in a run without kills.
func TestRunSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI many times")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	dir, sp := demoDir(t)
	src, _ := os.ReadFile(sp)
	os.WriteFile(sp, []byte(strings.Replace(string(src), "max_files_per_batch: 4", "max_files_per_batch: 1", 1)), 0o644)

	kills, done := 0, false
	for attempt := 0; attempt < 40 && !done; attempt++ {
		cmd := exec.Command(os.Args[0], "run", "--checkpoint", "demo/checkpoint", "--available-now", "--format", "json", sp)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), childEnv+"=1")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// later attempts get more time, and from the 30th on none is killed,
		// so the run ends however slow the machine is
		wait := time.Duration(r.Int64N(int64(50+attempt*40))) * time.Millisecond
		if attempt >= 30 {
			wait = time.Hour
		}
		timer := time.NewTimer(wait)
		select {
		case err := <-exited:
			timer.Stop()
			if err != nil {
				t.Fatalf("attempt %d: ckgate run failed: %v\n%s", attempt, err, out.String())
			}
			done = true
		case <-timer.C:
			cmd.Process.Signal(syscall.SIGKILL)
			if err := <-exited; err == nil {
				done = true // it finished just before the signal
			} else {
				kills++
			}
		}
	}
	if !done {
		t.Fatalf("no run completed after %d kills", kills)
	}
	if kills == 0 {
		t.Fatal("no run was killed: the test proves nothing")
	}
	t.Logf("%d kills before a run completed", kills)

	out, err := filestore.New(filepath.Join(dir, "demo", "out", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := checkpoint.ReadFileSinkLog(context.Background(), out, checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		name := e.Path[strings.LastIndex(e.Path, "/")+1:]
		data, _, err := out.Get(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			got = append(got, l)
		}
	}
	sort.Strings(got)
	want := demoSessions(t, 1, 10*time.Minute, 30*time.Minute)
	if !slices.Equal(got, want) {
		t.Fatalf("after %d kills the sink holds %d sessions, the reference %d", kills, len(got), len(want))
	}
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
