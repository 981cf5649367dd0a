package checkpoint

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
)

// ckgate's engine state: every file names its base, commits name each
// partition's tip (which stays put while a partition does not change).
func ckgateBase(t *testing.T) *builder {
	b := newBuilder(t)
	b.ckgate, b.snapshotEvery, b.parts = true, 3, 4
	// partition 3 of operator 1 never changes: its tip stays empty;
	// partition 2 changes only in batches 0 and 1
	b.skip = func(n int64, op, part int) bool { return op == 1 && (part == 3 || part == 2 && n > 1) }
	return b.writer(2, time.Now().Add(-time.Hour)).start().batches(8)
}

func TestInspectCkgateTips(t *testing.T) {
	r := inspect(t, ckgateBase(t).st, Options{})
	if r.Status != StatusClean || r.Writer.Kind != WriterCkgate || r.Writer.Epoch != 2 || r.Writer.Live {
		t.Fatalf("status %s writer %+v", r.Status, r.Writer)
	}
	if got := findingsOf(r, SeverityWarning); len(got) != 0 {
		t.Fatalf("findings %q", got)
	}
	for _, c := range []struct {
		op, part     string
		from         int64
		files        int
		latestPuts   int64
		latestDelete int64
	}{
		// batches 0..7: versions 1..8, snapshots at 1 (first file), 3, 6: the tip 8 builds on 7 and 6
		{"0", "0", 6, 3, 1, 1},
		{"1", "2", 1, 2, 1, 1}, // versions 1 (snapshot) and 2 (delta): the tip stays at 2
		{"1", "3", 0, 0, -1, -1},
	} {
		op := operator(t, r, c.op)
		p := op.Stores[0].Partitions[map[string]int{"0": 0, "2": 2, "3": 3}[c.part]]
		if !p.Rebuildable || *p.RebuildFrom != c.from || p.RebuildFiles != c.files || p.RequiredVersion != 8 {
			t.Errorf("op %s partition %s: %+v", c.op, c.part, p)
		}
		if c.latestPuts >= 0 {
			d := p.Details[len(p.Details)-1]
			if *d.Puts != c.latestPuts || *d.Deletes != c.latestDelete {
				t.Errorf("op %s partition %s latest %+v", c.op, c.part, d)
			}
		}
	}
}

func TestInspectCkgateBrokenChains(t *testing.T) {
	// a file of a chain deleted: the partition cannot be rebuilt, and
	// the problem names the file and what named it
	for _, c := range []struct {
		name, key, op string
		part          int
		problem       string
		findings      []string
	}{
		{"a missing base", "state/0/1/7_0000070001.delta", "0", 1,
			"state/0/1/7_0000070001.delta, named by state/0/1/8_0000080001.delta, is missing", []string{"error state-unrebuildable state/0/1"}},
		{"a missing tip", "state/1/0/8_0000080100.delta", "1", 0,
			"named by commits/7, is missing", []string{"error state-unrebuildable state/1/0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := ckgateBase(t)
			del(t, b.st, c.key)
			r := inspect(t, b.st, Options{})
			p := operator(t, r, c.op).Stores[0].Partitions[c.part]
			if p.Rebuildable || !strings.Contains(p.Problem, c.problem) {
				t.Errorf("problem %q", p.Problem)
			}
			if !slices.Equal(findingsOf(r, SeverityWarning), c.findings) {
				t.Errorf("findings %q", findingsOf(r, SeverityWarning))
			}
		})
	}
	t.Run("a corrupt chain file", func(t *testing.T) {
		b := ckgateBase(t)
		d := b.get("state/0/2/6_0000060002.snapshot")
		d[len(d)-1] ^= 1
		put(t, b.st, "state/0/2/6_0000060002.snapshot", d)
		r := inspect(t, b.st, Options{})
		want := []string{"error corrupt state/0/2/6_0000060002.snapshot", "error state-unrebuildable state/0/2"}
		if got := findingsOf(r, SeverityWarning); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	})
	t.Run("an attempt that did not commit", func(t *testing.T) {
		b := ckgateBase(t)
		put(t, b.st, "state/0/3/9_00deadbeef.delta", encodeCkgateState(CkgateStateHeader{Version: 9, Base: "8_0000080003.delta"}, nil))
		put(t, b.st, "state/0/3/8_00zombie00.delta", encodeCkgateState(CkgateStateHeader{Version: 8, Base: "7_0000070003.delta"}, nil))
		r := inspect(t, b.st, Options{})
		if !hasFinding(r, SeverityInfo, FindingStateUncommitted, "state/0/3/8_00zombie00.delta") || !operator(t, r, "0").Stores[0].Rebuildable {
			t.Errorf("findings %+v", r.Findings)
		}
	})
}

// The engine's own encoder and decoder agree with this package's reader.
func TestCkgateStateInterop(t *testing.T) {
	enc := state.NewEncoder(state.Header{Version: 12, Depth: 2, ChainBytes: 99, SnapBytes: 500, Base: "11_abc.delta"}, 0)
	enc.Add(state.Change{Key: []byte("a"), Value: []byte("1")})
	enc.Add(state.Change{Key: []byte("b"), Delete: true})
	enc.Add(state.Change{Key: []byte("c"), Value: nil})
	data, err := enc.Finish()
	if err != nil {
		t.Fatal(err)
	}
	h, c, err := DecodeCkgateState(data)
	if err != nil || h != (CkgateStateHeader{Version: 12, Depth: 2, ChainBytes: 99, SnapBytes: 500, Base: "11_abc.delta"}) || c != (RecordCounts{Puts: 2, Deletes: 1}) {
		t.Fatalf("%+v %+v %v", h, c, err)
	}
	mine := encodeCkgateState(CkgateStateHeader{Snapshot: true, Version: 3}, []StateRecord{{Key: []byte("k"), Value: []byte("v")}})
	sh, err := state.Decode(mine, nil)
	if err != nil || !sh.Snapshot || sh.Version != 3 {
		t.Fatalf("engine/state refuses this package's file: %+v %v", sh, err)
	}
	if _, ok := ParseStateFileName(state.FileName(7, true)); !ok {
		t.Errorf("%s is not a state file name here", state.FileName(7, true))
	}
	for n := range len(data) {
		if _, _, err := DecodeCkgateState(data[:n]); err == nil {
			t.Fatalf("cut at %d decoded", n)
		}
	}
}

// The writer epoch this package encodes is the one the gateway session
// reads back when it loses a create race (gateway.EntryEpoch).
func TestEntryEpochField(t *testing.T) {
	off := must(OffsetSeq{Metadata: &OffsetSeqMetadata{Epoch: 7}, Sources: []OffsetEntry{{JSON: "1", Present: true}}}.Encode())
	com := must(CommitMetadata{NextBatchWatermarkMs: 1, Epoch: 9}.Encode())
	for _, c := range []struct {
		data []byte
		want uint64
	}{{off, 7}, {com, 9}} {
		got, err := gateway.EntryEpoch("k", c.data)
		if err != nil || got != c.want {
			t.Errorf("%q: epoch %d, %v; want %d", c.data, got, err, c.want)
		}
	}
}
