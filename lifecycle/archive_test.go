package lifecycle_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/internal/filetree"
	"github.com/ckgate/ckgate/lifecycle"
)

const sparkAgg = "../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition"

func openStore(t testing.TB, raw string) gateway.Store {
	t.Helper()
	st, err := stores.Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	if err := gateway.MakeBucket(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

// tree returns every file under dir (relative path → bytes).
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out, err := filetree.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var now = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

func TestArchiveFileToFile(t *testing.T) {
	ctx := context.Background()
	srcDir := copyDir(t, sparkAgg)
	// One object above the stream threshold: streamed, not read whole.
	big := bytes.Repeat([]byte{0, 1, 2, 3, 5, 8, 13}, (lifecycle.StreamThreshold+1000)/7)
	if err := os.WriteFile(filepath.Join(srcDir, "state", "0", "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, srcDir)
	dstDir := filepath.Join(t.TempDir(), "archive")
	src, dst := openStore(t, srcDir), openStore(t, dstDir)
	opts := lifecycle.ArchiveOptions{Source: srcDir, Dest: dstDir, Principal: lifecycle.Principal{ID: "alice", Kind: "housekeeping"}, Now: now}
	res, err := lifecycle.Archive(ctx, src, dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Files != len(before) || res.Marker != nil {
		t.Fatalf("manifest holds %d files, the checkpoint %d", res.Manifest.Files, len(before))
	}
	after := tree(t, dstDir)
	for k, b := range before {
		if !bytes.Equal(after[k], b) {
			t.Fatalf("%s differs at the destination", k)
		}
	}
	if len(after) != len(before)+1 || after[lifecycle.ManifestKey] == nil {
		t.Fatalf("destination holds %d files, want %d and the manifest", len(after), len(before))
	}
	if got := tree(t, srcDir); len(got) != len(before) {
		t.Fatalf("a plain archive changed the source: %d files, was %d", len(got), len(before))
	}
	m, err := lifecycle.ReadManifest(ctx, dst)
	if err != nil || m.Files != len(before) || m.QueryID == "" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	// The copy is an inspectable checkpoint with the same verdict.
	r1, err1 := checkpoint.Inspect(ctx, src, checkpoint.Options{})
	r2, err2 := checkpoint.Inspect(ctx, dst, checkpoint.Options{})
	if err1 != nil || err2 != nil || r1.Status != r2.Status || r1.QueryID != r2.QueryID || *r1.LatestCommitBatch != *r2.LatestCommitBatch {
		t.Fatalf("inspect source %v %v, copy %v %v", r1, err1, r2, err2)
	}

	// A second archive to the same destination is refused.
	_, err = lifecycle.Archive(ctx, src, dst, opts)
	if !errors.Is(err, lifecycle.ErrDestNotEmpty) || !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("second archive: %v", err)
	}

	// Verification catches a changed byte.
	key := m.Entries[len(m.Entries)-1].Key
	p := filepath.Join(dstDir, filepath.FromSlash(key))
	b, _ := os.ReadFile(p)
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := lifecycle.Verify(ctx, dst, m.Entries, 4); !errors.Is(err, lifecycle.ErrVerify) || !strings.Contains(err.Error(), key) {
		t.Fatalf("verify after a change: %v", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := lifecycle.Verify(ctx, dst, m.Entries, 4); !errors.Is(err, lifecycle.ErrVerify) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("verify after a delete: %v", err)
	}
}

func TestArchiveFreshStart(t *testing.T) {
	ctx := context.Background()
	srcDir := copyDir(t, sparkAgg)
	before := tree(t, srcDir)
	src := openStore(t, srcDir)
	dstDir := filepath.Join(t.TempDir(), "a1")
	opts := lifecycle.ArchiveOptions{Source: srcDir, Dest: dstDir, FreshStart: true, Reason: "INC-7: topic re-created",
		Principal: lifecycle.Principal{ID: "alice", Kind: "housekeeping"}, Now: now}
	if _, err := lifecycle.Archive(ctx, src, openStore(t, dstDir), lifecycle.ArchiveOptions{FreshStart: true}); err == nil {
		t.Fatal("a fresh start without a reason was accepted")
	}
	if rec, err := lifecycle.CheckNotArchived(ctx, src); err != nil || rec != nil {
		t.Fatalf("before: %v %v", rec, err)
	}
	res, err := lifecycle.Archive(ctx, src, openStore(t, dstDir), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Marker == nil || res.Marker.ArchivedTo != dstDir || res.Marker.Reason != opts.Reason || res.Marker.Principal.ID != "alice" ||
		res.Marker.ManifestSHA256 != res.ManifestSHA256 || !res.Marker.Time.Equal(now()) {
		t.Fatalf("marker %+v", res.Marker)
	}
	after := tree(t, srcDir)
	for k, b := range before {
		if !bytes.Equal(after[k], b) {
			t.Fatalf("fresh start changed %s of the old checkpoint", k)
		}
	}
	if len(after) != len(before)+1 || after[lifecycle.ArchivedKey] == nil {
		t.Fatalf("source holds %d files, want %d and the marker", len(after), len(before))
	}
	rec, err := lifecycle.CheckNotArchived(ctx, src)
	if !errors.Is(err, lifecycle.ErrArchived) || rec == nil || rec.ArchivedTo != dstDir {
		t.Fatalf("after: %v %v", rec, err)
	}
	// A second fresh start of the same root is refused, and writes nothing.
	d2 := filepath.Join(t.TempDir(), "a2")
	opts.Dest = d2
	if _, err := lifecycle.Archive(ctx, src, openStore(t, d2), opts); !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("second fresh start: %v", err)
	}
	if got := tree(t, d2); len(got) != 0 {
		t.Fatalf("a refused fresh start wrote %d files", len(got))
	}
}

func TestArchiveNotCheckpoint(t *testing.T) {
	src := openStore(t, filepath.Join(t.TempDir(), "empty"))
	dst := openStore(t, filepath.Join(t.TempDir(), "dst"))
	if _, err := lifecycle.Archive(context.Background(), src, dst, lifecycle.ArchiveOptions{}); !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		t.Fatalf("got %v", err)
	}
}

func s3URL(t testing.TB) string {
	t.Helper()
	emu := emulator.Versitygw(t)
	q := url.Values{"endpoint": {emu.Endpoint}, "path_style": {"true"}, "region": {emu.Region}}.Encode()
	return "s3://ckgate-" + strings.ToLower(rand.Text()[:12]) + "/archive/q1?" + q
}

// File to the S3 emulator, and back: the round trip holds the same bytes.
func TestArchiveFileToS3(t *testing.T) {
	ctx := context.Background()
	srcDir := copyDir(t, sparkAgg)
	before := tree(t, srcDir)
	u := s3URL(t)
	dst := openStore(t, u)
	res, err := lifecycle.Archive(ctx, openStore(t, srcDir), dst, lifecycle.ArchiveOptions{Source: srcDir, Dest: u})
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Files != len(before) {
		t.Fatalf("%d files archived, want %d", res.Manifest.Files, len(before))
	}
	back := filepath.Join(t.TempDir(), "back")
	if _, err := lifecycle.Archive(ctx, dst, openStore(t, back), lifecycle.ArchiveOptions{Source: u, Dest: back}); err != nil {
		t.Fatal(err)
	}
	got := tree(t, back)
	for k, b := range before {
		if !bytes.Equal(got[k], b) {
			t.Fatalf("%s differs after file → s3 → file", k)
		}
	}
	if _, err := lifecycle.Archive(ctx, openStore(t, srcDir), dst, lifecycle.ArchiveOptions{}); !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("second archive to s3: %v", err)
	}
}

// BenchmarkArchive copies and verifies a checkpoint of 200 files of 64 KiB
// from the local disk to the local disk; it records the throughput in MB/s.
func BenchmarkArchive(b *testing.B) {
	benchArchive(b, "archive_file_to_file_MBps", func(i int) string { return filepath.Join(b.TempDir(), fmt.Sprint("dst", i)) })
}

// BenchmarkArchiveToS3 is BenchmarkArchive to the S3 emulator.
func BenchmarkArchiveToS3(b *testing.B) {
	u := s3URL(b)
	base, q, _ := strings.Cut(u, "?")
	benchArchive(b, "archive_file_to_s3_MBps", func(i int) string { return fmt.Sprintf("%s/%d?%s", base, i, q) })
}

// benchCheckpoint writes the checkpoint the archive and restore
// benchmarks copy (metadata and 200 state files of 64 KiB) into a new
// local store; total is its state bytes.
func benchCheckpoint(b *testing.B) (src gateway.Store, total int64) {
	ctx := context.Background()
	src = openStore(b, filepath.Join(b.TempDir(), "src"))
	if _, err := src.Put(ctx, "metadata", []byte(`{"id":"q"}`), gateway.IfAbsent()); err != nil {
		b.Fatal(err)
	}
	blob := bytes.Repeat([]byte("ckgate-state "), 64<<10/13)
	for i := range 200 {
		if _, err := src.Put(ctx, fmt.Sprintf("state/0/%d/%d.delta", i%8, i), blob, gateway.IfAbsent()); err != nil {
			b.Fatal(err)
		}
		total += int64(len(blob))
	}
	return src, total
}

func benchArchive(b *testing.B, name string, dest func(int) string) {
	ctx := context.Background()
	src, total := benchCheckpoint(b)
	b.SetBytes(total)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		dst := openStore(b, dest(i))
		if _, err := lifecycle.Archive(ctx, src, dst, lifecycle.ArchiveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	mbps := float64(total) * float64(b.N) / 1e6 / time.Since(start).Seconds()
	benchsum.Record(b, name, mbps, "MB/s", ">1")
}
