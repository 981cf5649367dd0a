package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// TestRealTables reads every table of testdata/delta with the expectations
// of its INDEX.md (counts checked against a replay of the JSON commits).
func TestRealTables(t *testing.T) {
	ctx := context.Background()
	type want struct {
		latest, earliest int64
		id               string
		files            int
		base             FileKind // the checkpoint kind the latest snapshot starts from (KindOther: none)
		txn              map[string]int64
		features         []string
	}
	cases := map[string]want{
		"checkpoint":                {latest: 14, id: "testId", files: 1, base: KindCheckpoint},
		"only-checkpoint-files":     {latest: 2, id: "testId", files: 7, base: KindCheckpoint},
		"multi-part-checkpoint":     {latest: 1, id: "testId", files: 10, base: KindMultiPartCheckpoint},
		"v2-checkpoint-json":        {latest: 2, id: "8a390218-e4ee-4341-b6de-4920e27d3f78", files: 4, base: KindV2Checkpoint, features: []string{"v2Checkpoint"}},
		"v2-checkpoint-parquet":     {latest: 2, id: "7e2a1106-198b-4653-a612-2aa44685cb27", files: 4, base: KindV2Checkpoint, features: []string{"v2Checkpoint"}},
		"corrupted-last-checkpoint": {latest: 10, id: "5756e7b1-4b09-4c4e-a3b8-da3c214613d0", files: 11, base: KindCheckpoint},
		"snapshot-vacuumed":         {latest: 5, id: "93351cf1-c931-4326-88f0-d10e29e71b21", files: 2},
		"deltalog-getChanges":       {latest: 2, id: "testId", files: 0, txn: map[string]int64{"fakeAppId": 3}},
		"history-delta-0.2.0":       {latest: 3, id: "22ef18ba-191c-4c36-a606-3dad5cdf3830", files: 3, base: KindCheckpoint, txn: map[string]int64{"e4a20b59-dd0e-4c50-b074-e8ae4786df30": 0}},
		"dv-partitioned-with-checkpoint": {latest: 15, id: "testId", files: 15, // (path, deletion vector) is one logical file: commit 1 adds part=0/part-00000-8387… with a vector and removes it without one
			base: KindCheckpoint, features: []string{"deletionVectors"}},
		"basic-with-inserts-deletes-checkpoint": {latest: 13, id: "testId", files: 7, base: KindCheckpoint},
	}
	entries, err := os.ReadDir(realTables)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]bool{"versions-not-contiguous": true, "deltalog-invalid-protocol-version": true, "no-delta-log-folder": true}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, ok := cases[e.Name()]; !ok && !refused[e.Name()] {
			t.Errorf("table %s of testdata/delta has no test case", e.Name())
		}
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			s := fileStore(t, filepath.Join(realTables, name))
			tb := openTable(t, s, "")
			snap, err := tb.Snapshot(ctx, -1)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Version != w.latest || snap.Metadata.ID != w.id || len(snap.Files) != w.files {
				t.Errorf("snapshot = version %d id %q %d files; want %d %q %d", snap.Version, snap.Metadata.ID, len(snap.Files), w.latest, w.id, w.files)
			}
			if w.base == KindOther {
				if snap.Base != nil {
					t.Errorf("base = %+v; want a replay from 0", snap.Base)
				}
			} else if snap.Base == nil || snap.Base.Kind != w.base {
				t.Errorf("base = %+v; want a %v", snap.Base, w.base)
			}
			for app, v := range w.txn {
				if got, ok := snap.TxnVersion(app); !ok || got != v {
					t.Errorf("txn %s = %d, %v; want %d", app, got, ok, v)
				}
			}
			if _, ok := snap.TxnVersion("some-other-app"); ok {
				t.Error("a txn for an app that never wrote")
			}
			for _, f := range w.features {
				if !snap.Protocol.HasReaderFeature(f) {
					t.Errorf("reader feature %s missing: %+v", f, snap.Protocol)
				}
			}
			if e := tb.Log().EarliestReplayable(); e != w.earliest {
				t.Errorf("earliest replayable = %d; want %d", e, w.earliest)
			}
			// the checkpoint-based snapshot equals the replay of every JSON commit
			ref := jsonReplay(t, s, w.latest)
			if !slices.Equal(paths(ref.Files), paths(snap.Files)) {
				t.Errorf("files from the checkpoint differ from the JSON replay:\n%v\n%v", paths(snap.Files), paths(ref.Files))
			}
			if ref.Metadata.ID != snap.Metadata.ID || len(ref.Txns) != len(snap.Txns) || len(ref.Tombstones) != len(snap.Tombstones) {
				t.Errorf("checkpoint snapshot %+v differs from JSON replay %+v", snap, ref)
			}
		})
	}
}

func TestRealTablesRefused(t *testing.T) {
	ctx := context.Background()
	t.Run("versions-not-contiguous", func(t *testing.T) {
		tb := openTable(t, fileStore(t, filepath.Join(realTables, "versions-not-contiguous")), "")
		_, err := tb.Snapshot(ctx, -1)
		var ge *GapError
		if !errors.As(err, &ge) || ge.From != 1 || !strings.Contains(err.Error(), "_delta_log/00000000000000000001.json") {
			t.Fatalf("err = %v; want a gap at version 1 naming its file", err)
		}
	})
	t.Run("deltalog-invalid-protocol-version", func(t *testing.T) {
		tb := openTable(t, fileStore(t, filepath.Join(realTables, "deltalog-invalid-protocol-version")), "")
		_, err := tb.Snapshot(ctx, -1)
		if !errors.Is(err, ErrUnsupportedProtocol) || !strings.Contains(err.Error(), "reader version 99") || !strings.Contains(err.Error(), "00000000000000000000.json") {
			t.Fatalf("err = %v; want the reader version 99 refused, naming the commit", err)
		}
	})
	t.Run("no-delta-log-folder", func(t *testing.T) {
		_, err := Open(ctx, fileStore(t, filepath.Join(realTables, "no-delta-log-folder")), "")
		if !errors.Is(err, ErrNotDelta) || !strings.Contains(err.Error(), "_delta_log") {
			t.Fatalf("err = %v; want ErrNotDelta", err)
		}
	})
}

// Delta's own test overwrites _last_checkpoint with garbage: the reader
// falls back to listing and still finds version 10 from checkpoint 10.
func TestCorruptedLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	s, _ := copyTable(t, "corrupted-last-checkpoint")
	if err := s.Delete(ctx, LastCheckpointKey, gateway.None()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, LastCheckpointKey, []byte("{ this is not json"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	snap, err := openTable(t, s, "").Snapshot(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 10 || len(snap.Files) != 11 || snap.Base == nil || snap.Base.Version != 10 {
		t.Fatalf("snapshot = v%d %d files base %+v", snap.Version, len(snap.Files), snap.Base)
	}
	if len(snap.Warnings) != 1 || !strings.Contains(snap.Warnings[0], "_last_checkpoint") {
		t.Fatalf("warnings = %q; want the unreadable _last_checkpoint named", snap.Warnings)
	}
}

// A checkpoint that is not parquet is named and skipped for a replay of
// the JSON commits.
func TestCorruptCheckpointFallsBack(t *testing.T) {
	ctx := context.Background()
	s, _ := copyTable(t, "checkpoint")
	key := CheckpointKey(10)
	if err := s.Delete(ctx, key, gateway.None()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, key, []byte("PAR1 garbage"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	snap, err := openTable(t, s, "").Snapshot(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Base != nil || snap.Version != 14 || len(snap.Files) != 1 {
		t.Fatalf("snapshot = v%d base %+v files %d", snap.Version, snap.Base, len(snap.Files))
	}
	if len(snap.Warnings) == 0 || !strings.Contains(strings.Join(snap.Warnings, " "), key) {
		t.Fatalf("warnings = %q; want %s named", snap.Warnings, key)
	}
}

// Every version of the checkpoint table builds the same from the
// checkpoint (versions 10..14) as from JSON alone.
func TestSnapshotAtEveryVersion(t *testing.T) {
	ctx := context.Background()
	s := fileStore(t, filepath.Join(realTables, "checkpoint"))
	tb := openTable(t, s, "")
	for v := int64(0); v <= 14; v++ {
		snap, err := tb.Snapshot(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if (v >= 10) != (snap.Base != nil) {
			t.Errorf("version %d: base %+v", v, snap.Base)
		}
		if ref := jsonReplay(t, s, v); !slices.Equal(paths(ref.Files), paths(snap.Files)) {
			t.Errorf("version %d: %v, JSON replay %v", v, paths(snap.Files), paths(ref.Files))
		}
	}
	if _, err := tb.Snapshot(ctx, 15); !errors.Is(err, ErrLogGap) {
		t.Errorf("version 15 of a 14-version table: %v", err)
	}
}

// A footer length larger than the file is refused before parquet-go
// allocates it (it would allocate up to 4 GiB).
func TestCheckpointHugeFooterRefused(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(realTables, "history-delta-0.2.0", CheckpointKey(3)))
	if err != nil {
		t.Fatal(err)
	}
	n := len(b)
	b[n-8], b[n-7], b[n-6], b[n-5] = 0xff, 0xff, 0xff, 0x7f
	_, err = ParseCheckpointParquet("_delta_log/x.checkpoint.parquet", b)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "footer") || !strings.Contains(err.Error(), "_delta_log/x.checkpoint.parquet") {
		t.Fatalf("err = %v", err)
	}
}
