package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/checkpoint/checkpointtest"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/filetree"
)

// synthFiles are the files of a checkpoint in Spark's layout with n
// batches of a file source (one log offset per batch, a batch a minute,
// the watermark 10 minutes behind from batch 1 on); the latest batch has
// no commit when inflight.
func synthFiles(t testing.TB, qid string, n int, inflight bool) map[string][]byte {
	t.Helper()
	files := map[string][]byte{"metadata": []byte(`{"id":"` + qid + `"}`)}
	const t0 = int64(1_750_000_000_000)
	for b := range n {
		ts := t0 + int64(b)*60_000
		wm := int64(0)
		if b > 0 {
			wm = ts - 600_000 - int64(b%7)*1000
		}
		seq := checkpoint.OffsetSeq{Version: 1, Metadata: &checkpoint.OffsetSeqMetadata{BatchWatermarkMs: wm, BatchTimestampMs: ts,
			Conf: map[string]string{"spark.sql.shuffle.partitions": "1"}},
			Sources: []checkpoint.OffsetEntry{{JSON: `{"logOffset":` + strconv.Itoa(b) + `}`, Present: true}}}
		data, err := seq.Encode()
		if err != nil {
			t.Fatal(err)
		}
		files[checkpoint.OffsetsKey(int64(b))] = data
		if inflight && b == n-1 {
			continue
		}
		c, err := checkpoint.CommitMetadata{Version: 1, NextBatchWatermarkMs: wm + 60_000}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		files[checkpoint.CommitKey(int64(b))] = c
	}
	return files
}

// writeDir writes files under dir with filetree.Write.
func writeDir(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := filetree.Write(dir, files); err != nil {
		t.Fatal(err)
	}
}

// localFleet writes n small checkpoints (a few batches each, every tenth
// one in flight) under a new directory.
func localFleet(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		writeDir(t, filepath.Join(dir, fmt.Sprintf("team-%02d/query-%04d", i%10, i)), synthFiles(t, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), 3+i%5, i%10 == 0))
	}
	return dir
}

// putFleet writes the same fleet through a store, 32 writes at a time.
func putFleet(t testing.TB, st gateway.Store, n int) {
	t.Helper()
	_, err := checkpointtest.PutAll(context.Background(), st, 32, func(put func(key string, data []byte)) int {
		files := 0
		for i := range n {
			for k, v := range synthFiles(t, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), 3+i%5, i%10 == 0) {
				put(fmt.Sprintf("team-%02d/query-%04d/%s", i%10, i, k), v)
				files++
			}
		}
		return files
	})
	if err != nil {
		t.Fatal(err)
	}
}
