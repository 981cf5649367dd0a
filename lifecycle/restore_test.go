package lifecycle_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/lifecycle"
)

// changing is an archive store whose key changes right after its first
// read: the file a restore verified is not the one it then copies.
type changing struct {
	gateway.Store
	key  string
	mu   sync.Mutex
	read int
}

func (c *changing) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	rc, a, err := c.Store.GetStream(ctx, key)
	if key == c.key {
		c.mu.Lock()
		if c.read++; c.read == 1 {
			data, _ := io.ReadAll(rc)
			rc.Close()
			if _, err := c.Store.Put(ctx, key, bytes.ToUpper(data), gateway.None()); err != nil {
				panic(err)
			}
			rc = io.NopCloser(bytes.NewReader(data))
		}
		c.mu.Unlock()
	}
	return rc, a, err
}

func archiveOf(t *testing.T, srcDir string) (arcDir string, arc gateway.Store) {
	t.Helper()
	arcDir = filepath.Join(t.TempDir(), "archive")
	arc = openStore(t, arcDir)
	if _, err := lifecycle.Archive(context.Background(), openStore(t, srcDir), arc, lifecycle.ArchiveOptions{Source: srcDir, Dest: arcDir, Now: now}); err != nil {
		t.Fatal(err)
	}
	return arcDir, arc
}

func TestRestoreFileToFile(t *testing.T) {
	ctx := context.Background()
	srcDir := copyDir(t, sparkAgg)
	big := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, (lifecycle.StreamThreshold+1000)/7)
	if err := os.WriteFile(filepath.Join(srcDir, "state", "0", "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, arc := archiveOf(t, srcDir)
	dstDir := filepath.Join(t.TempDir(), "restored")
	res, err := lifecycle.Restore(ctx, arc, openStore(t, dstDir), lifecycle.RestoreOptions{Archive: "a", Dest: dstDir, Now: now, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	before, after := tree(t, srcDir), tree(t, dstDir)
	for k, b := range before {
		if !bytes.Equal(after[k], b) {
			t.Fatalf("%s differs after the restore", k)
		}
	}
	if len(after) != len(before)+2 || after[lifecycle.RestoreKey] == nil || after[lifecycle.RestoredKey] == nil || after[lifecycle.ManifestKey] != nil {
		t.Fatalf("restored %d files, the source %d: %v", len(after), len(before), res)
	}
	if res.Copied != len(before) || res.Kept != 0 {
		t.Fatalf("result %+v", res)
	}
	if rec, err := lifecycle.CheckNotArchived(ctx, openStore(t, dstDir)); rec != nil || err != nil {
		t.Fatalf("a whole restore is refused: %v", err)
	}
}

// A file that changes in the archive after the verification is refused
// before it is written; the root is marked incomplete and run refuses it.
func TestRestoreArchiveChangedDuringCopy(t *testing.T) {
	ctx := context.Background()
	_, arc := archiveOf(t, copyDir(t, sparkAgg))
	dstDir := filepath.Join(t.TempDir(), "restored")
	dst := openStore(t, dstDir)
	_, err := lifecycle.Restore(ctx, &changing{Store: arc, key: "offsets/1"}, dst, lifecycle.RestoreOptions{Dest: dstDir, Now: now, Concurrency: 1})
	if !errors.Is(err, lifecycle.ErrVerify) || !errors.Is(err, lifecycle.ErrRestoreIncomplete) || !strings.Contains(err.Error(), "offsets/1") {
		t.Fatalf("restore of a changing archive: %v", err)
	}
	got := tree(t, dstDir)
	if _, ok := got["offsets/1"]; ok {
		t.Fatal("the changed file was written")
	}
	if _, ok := got["metadata"]; ok || got[lifecycle.RestoreKey] == nil || got[lifecycle.RestoredKey] != nil {
		t.Fatalf("a failed restore left %v", got)
	}
	if _, err := lifecycle.CheckNotArchived(ctx, dst); !errors.Is(err, lifecycle.ErrRestoreIncomplete) {
		t.Fatalf("an incomplete restore is not refused: %v", err)
	}
	// The archive now differs from its manifest: a second try is refused
	// before it writes, and names the file.
	_, err = lifecycle.Restore(ctx, arc, dst, lifecycle.RestoreOptions{Dest: dstDir, Now: now})
	var ve *lifecycle.VerifyError
	if !errors.As(err, &ve) || len(ve.Mismatches) != 1 || ve.Mismatches[0].Key != "offsets/1" {
		t.Fatalf("second restore: %v", err)
	}
}

// BenchmarkRestore verifies an archive of 200 files of 64 KiB and restores
// it from the local disk to the local disk (every file read three times:
// verified, copied, re-read at the destination); it records the
// throughput in MB/s of checkpoint bytes restored.
func BenchmarkRestore(b *testing.B) {
	ctx := context.Background()
	src, total := benchCheckpoint(b)
	arc := openStore(b, filepath.Join(b.TempDir(), "arc"))
	if _, err := lifecycle.Archive(ctx, src, arc, lifecycle.ArchiveOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(total)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		dst := openStore(b, filepath.Join(b.TempDir(), fmt.Sprint("dst", i)))
		if _, err := lifecycle.Restore(ctx, arc, dst, lifecycle.RestoreOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	mbps := float64(total) * float64(b.N) / 1e6 / time.Since(start).Seconds()
	benchsum.Record(b, "restore_file_to_file_MBps", mbps, "MB/s", ">1")
}
