package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// preflightCheckpoint is a small checkpoint as the engine writes it: two
// committed batches of a stateful query with a file source, one partition
// holding a snapshot and a delta on it.
func preflightCheckpoint(tb testing.TB) map[string][]byte {
	tb.Helper()
	enc := func(h state.Header, cs ...state.Change) []byte {
		e := state.NewEncoder(h, 0)
		for _, c := range cs {
			e.Add(c)
		}
		b, err := e.Finish()
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	snap := enc(state.Header{Snapshot: true, Version: 1}, state.Change{Key: []byte("a"), Value: []byte("1")})
	delta := enc(state.Header{Version: 2, Depth: 1, ChainBytes: 40, SnapBytes: int64(len(snap)), Base: "1_aa.snapshot"},
		state.Change{Key: []byte("a"), Delete: true}, state.Change{Key: []byte("b"), Value: []byte("2")})
	offsets := func(end string) []byte {
		b, err := checkpoint.OffsetSeq{Version: 1, Metadata: &checkpoint.OffsetSeqMetadata{BatchTimestampMs: 1},
			Sources: []checkpoint.OffsetEntry{{JSON: end, Present: true}}}.Encode()
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	commit := func(tip string) []byte {
		b, err := checkpoint.CommitMetadata{Version: 1, StateUniqueIDs: map[int64][][]string{0: {{tip}}}}.Encode()
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	src, err := checkpoint.EncodeFileSourceLog([]checkpoint.FileEntry{{Path: "file:///in/a.jsonl", Timestamp: 1, BatchID: 0}})
	if err != nil {
		tb.Fatal(err)
	}
	op, err := checkpoint.OperatorMetadata{Version: 1, OperatorName: "dedupe",
		Stores: []checkpoint.StoreMetadata{{Name: checkpoint.DefaultStore, NumPartitions: 1}}}.Encode()
	if err != nil {
		tb.Fatal(err)
	}
	plan := checkpoint.EnginePlan{Version: 1, Name: "q", Fingerprint: "sha256:x", Partitions: 1,
		Source: map[string]string{"kind": "files"}, Sink: map[string]string{"kind": "noop"}}
	return map[string][]byte{
		checkpoint.MetadataKey:              checkpoint.StreamMetadata{ID: "5f0e0c8c-3b5e-4a43-9c8e-2f9f3c1c2d7a"}.Encode(),
		"offsets/0":                         offsets("0"),
		"offsets/1":                         offsets("1"),
		"commits/0":                         commit("1_aa.snapshot"),
		"commits/1":                         commit("2_bb.delta"),
		"sources/0/0":                       src,
		"sources/0/1":                       src,
		checkpoint.OperatorMetadataKey("0"): op,
		"state/0/0/1_aa.snapshot":           snap,
		"state/0/0/2_bb.delta":              delta,
		checkpoint.PlanKey:                  plan.Encode(),
	}
}

// FuzzPreflight replaces one file of a good checkpoint (the first byte
// picks which) with fuzzed bytes and checks that the restart check never
// panics and either accepts the checkpoint or refuses it with a
// *CorruptError that names a key of it and a next step.
func FuzzPreflight(f *testing.F) {
	good := preflightCheckpoint(f)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range good {
			if !yield(k) {
				return
			}
		}
	})
	for i, k := range keys {
		f.Add(append([]byte{byte(i)}, good[k]...))
		if len(good[k]) > 4 {
			f.Add(append([]byte{byte(i)}, good[k][:len(good[k])/2]...))
		}
	}
	s := &spec.Spec{Source: spec.Source{Kind: spec.SourceFiles}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		key := keys[int(data[0])%len(keys)]
		ms := memstore.New()
		ctx := context.Background()
		for k, v := range good {
			if k == key {
				v = data[1:]
			}
			if _, err := ms.Put(ctx, k, v, gateway.None()); err != nil {
				t.Fatal(err)
			}
		}
		err := preflight(ctx, ms, s)
		if err == nil {
			return
		}
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: not a *CorruptError: %v", key, err)
		}
		if ce.Key == "" || ce.Next == "" || !strings.Contains(err.Error(), ce.Key) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: %#v: %v", key, ce, err)
		}
		if _, ok := good[ce.Key]; !ok && !strings.HasPrefix(ce.Key, "state/0/0/") && !strings.HasPrefix(ce.Key, "sources/0") {
			t.Fatalf("%s: the error names %s, not a file of the checkpoint: %v", key, ce.Key, err)
		}
	})
}

// TestPreflightAcceptsGood: the fuzz target's checkpoint passes.
func TestPreflightAcceptsGood(t *testing.T) {
	ms := memstore.New()
	for k, v := range preflightCheckpoint(t) {
		if _, err := ms.Put(context.Background(), k, v, gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	if err := preflight(context.Background(), ms, &spec.Spec{Source: spec.Source{Kind: spec.SourceFiles}}); err != nil {
		t.Fatal(err)
	}
}
