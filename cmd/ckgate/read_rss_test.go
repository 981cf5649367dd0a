//go:build linux

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/hostiletest"
)

// maxReadRSSGrowthMiB is the goal: reading any checkpoint file, whatever
// its size, grows a command's peak RSS by at most this much.
const maxReadRSSGrowthMiB = 64

// giantSize is the size of the planted (sparse) checkpoint file: 1 GiB.
const giantSize = 1 << 30

// rssGrowth is the peak RSS growth of one command on one giant file.
type rssGrowth struct {
	file, command string
	mib           float64
	out           string // what the command printed
}

// latestEntry returns the key of the highest-numbered log entry in dir.
func latestEntry(t testing.TB, ck, dir string) string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(ck, dir))
	if err != nil {
		t.Fatal(err)
	}
	best := int64(-1)
	for _, de := range des {
		if n, err := strconv.ParseInt(strings.TrimSuffix(de.Name(), ".compact"), 10, 64); err == nil && n > best {
			best = n
		}
	}
	if best < 0 {
		t.Fatalf("no entries in %s", dir)
	}
	name := strconv.FormatInt(best, 10)
	if _, err := os.Stat(filepath.Join(ck, dir, name)); err != nil {
		name += ".compact"
	}
	return dir + "/" + name
}

// measureReadRSS runs run, inspect, gap and retention plan (children) on the demo
// checkpoint, once as it is and once with each file ckgate parses (the
// latest offsets and commit, metadata, the writer record, the plan, the
// latest file source log entry, every state file: "state/0/*") replaced
// by a 1 GiB sparse file, and
// returns the peak RSS growth of each over the same command on the intact
// checkpoint.
func measureReadRSS(t testing.TB) []rssGrowth {
	t.Helper()
	pristine := hostileDemo(t)
	ck := filepath.Join(pristine, "demo", "checkpoint")
	files := []string{latestEntry(t, ck, "offsets"), latestEntry(t, ck, "commits"), "metadata",
		"_ckgate/writer", "_ckgate/plan.json", latestEntry(t, ck, "sources/0"), stateFiles}
	commands := [][]string{
		{"run", "--checkpoint", "demo/checkpoint", "--available-now", hostileSpec},
		{"inspect", "demo/checkpoint"},
		{"gap", "demo/checkpoint"},
		{"retention", "plan", "demo/checkpoint"},
	}
	copyDemo := func() string {
		dir := filepath.Join(t.TempDir(), "w")
		if err := os.CopyFS(dir, os.DirFS(pristine)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	base := map[string]int64{}
	for _, c := range commands {
		base[c[0]] = runChild(t, copyDemo(), c...).maxRSSKiB
	}
	var out []rssGrowth
	for _, f := range files {
		for _, c := range commands {
			dir := copyDemo()
			plant(t, filepath.Join(dir, "demo", "checkpoint"), f)
			r := runChild(t, dir, c...)
			out = append(out, rssGrowth{file: f, command: c[0], mib: float64(max(0, r.maxRSSKiB-base[c[0]])) / 1024,
				out: fmt.Sprintf("exit %d\n%s%s", r.code, r.stdout, r.stderr)})
		}
	}
	return out
}

// stateFiles stands for every state file of the checkpoint.
const stateFiles = "state/0/*"

// plant replaces the file f of the checkpoint at ck (or, for stateFiles,
// every state file) with a 1 GiB sparse file.
func plant(t testing.TB, ck, f string) {
	t.Helper()
	if f != stateFiles {
		hostiletest.Sparse(t, filepath.Join(ck, filepath.FromSlash(f)), giantSize)
		return
	}
	n := 0
	err := filepath.WalkDir(filepath.Join(ck, "state", "0"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(p, "_metadata") {
			hostiletest.Sparse(t, p, giantSize)
			n++
		}
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("state files: %d, %v", n, err)
	}
}

// TestHostileReadRSSBounded: reading a 1 GiB checkpoint file never grows a
// command's peak RSS by more than 64 MiB: the file is refused, naming it,
// before anything is allocated for it.
func TestHostileReadRSSBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI 32 times")
	}
	for _, g := range measureReadRSS(t) {
		t.Logf("%-20s %-8s +%.1f MiB", g.file, g.command, g.mib)
		if g.mib > maxReadRSSGrowthMiB {
			t.Errorf("%s on a 1 GiB %s: peak RSS grew by %.0f MiB, want <= %d\n%s", g.command, g.file, g.mib, maxReadRSSGrowthMiB, g.out)
		}
		name := g.file
		if name == stateFiles {
			if g.command != "run" {
				continue
			}
			name = "state/0/"
		}
		if (g.command == "run" || g.command == "inspect") && !strings.Contains(g.out, name) {
			t.Errorf("%s on a 1 GiB %s does not name it:\n%s", g.command, g.file, g.out)
		}
	}
}

// BenchmarkCheckpointReadRSS records the largest peak RSS growth of
// measureReadRSS as checkpoint_read_rss_growth_mib (goal <= 64).
func BenchmarkCheckpointReadRSS(b *testing.B) {
	var worst float64
	for b.Loop() {
		for _, g := range measureReadRSS(b) {
			worst = max(worst, g.mib)
		}
	}
	benchsum.Record(b, "checkpoint_read_rss_growth_mib", worst, "MiB", fmt.Sprintf("<=%d", maxReadRSSGrowthMiB))
}
