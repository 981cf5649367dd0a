package sessiontest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/sessiontest"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// fsyncFloor is the cheapest durable small-file write on dir's disk: create,
// write 200 bytes, fsync the file, close, fsync the directory.
func fsyncFloor(b *testing.B, dir string) {
	f, err := os.CreateTemp(dir, "floor-*")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 200)); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCommitLocal: one steady-state batch commit (writer-record read +
// two create-only log writes) on the local disk, next to the fsync floor of
// the same disk measured in the same run, alternating so both see the same
// disk conditions. Goal: commit <= 1.5 x (2 x floor), and 3 requests.
func BenchmarkCommitLocal(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	floorDir := filepath.Join(b.TempDir(), "floor")
	if err := os.Mkdir(floorDir, 0o755); err != nil {
		b.Fatal(err)
	}
	m, _ := gateway.NewMetrics(nil)
	st := m.Wrap(mustStore(b, root), "file")
	sess, err := gateway.OpenSession(ctx, st, sessiontest.Options(1))
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close(ctx)
	for n := range 2 {
		if err := sessiontest.Batch(ctx, sess, n); err != nil {
			b.Fatal(err)
		}
	}
	m.Reset()
	var commit, floor time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := sessiontest.Batch(ctx, sess, i+2); err != nil {
			b.Fatal(err)
		}
		commit += time.Since(start)
		b.StopTimer()
		start = time.Now()
		fsyncFloor(b, floorDir)
		floor += time.Since(start)
		b.StartTimer()
	}
	b.StopTimer()
	ratio := float64(commit) / float64(2*floor)
	reqs := float64(m.Total()) / float64(b.N)
	benchsum.Record(b, "commit_local_us", float64(commit.Microseconds())/float64(b.N), "us", "")
	benchsum.Record(b, "fsync_floor_local_us", float64(floor.Microseconds())/float64(b.N), "us", "")
	benchsum.Record(b, "commit_local_vs_fsync_floor", ratio, "ratio", "<=1.5")
	benchsum.Record(b, "commit_requests_per_batch", reqs, "req", "<=3")
}
