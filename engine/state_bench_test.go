package engine_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// windowKey is the state key the tumbling window operator uses for an
// integer key k and window start s.
func windowKey(k, start int64) []byte {
	b := row.IntV(k).AppendKey(nil)
	return binary.BigEndian.AppendUint64(b, uint64(start)^(1<<63))
}

func countValue(n int64) []byte { return binary.AppendUvarint(nil, uint64(n)) }

// stateWorld is a state store of keys entries in parts partitions on the
// local disk, updated by batches that change a fraction of the keys.
type stateWorld struct {
	st     *state.Store
	parts  int
	keys   int64
	counts []int64
	tips   []state.Tip
	bytes  int64 // written through the store
	mu     sync.Mutex
}

func newStateWorld(b testing.TB, keys int64, parts int, p state.Policy, base gateway.Store) *stateWorld {
	w := &stateWorld{parts: parts, keys: keys, counts: make([]int64, keys), tips: make([]state.Tip, parts)}
	cp := gateway.Intercept(base, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op == gateway.OpPut {
			w.mu.Lock()
			w.bytes += c.Size
			w.mu.Unlock()
		}
		return next(ctx)
	})
	w.st = state.New(cp, 0, p)
	return w
}

// fullStateWorld is a state world under the default policy whose version 1
// holds every key: the initial state of each benchmark.
func fullStateWorld(b testing.TB, keys int64, parts int, base gateway.Store, part func(int64) int) *stateWorld {
	w := newStateWorld(b, keys, parts, defaultPolicy(b), base)
	w.batch(b, 1, keyRange(int(keys)), part)
	return w
}

// batch updates the given keys (+1 each) and writes version v; it returns
// the encoded size of the changed entries.
func (w *stateWorld) batch(b testing.TB, v int64, keys []int64, part func(int64) int) int64 {
	b.Helper()
	changes := make([][]state.Change, w.parts)
	for _, k := range keys {
		w.counts[k]++
		changes[part(k)] = append(changes[part(k)], state.Change{Key: windowKey(k, 0), Value: countValue(w.counts[k])})
	}
	var size int64
	var wg sync.WaitGroup
	errs := make([]error, w.parts)
	for p, cs := range changes {
		slices.SortFunc(cs, func(a, b state.Change) int { return bytes.Compare(a.Key, b.Key) })
		for _, c := range cs {
			size += c.EncodedSize()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			wr, err := w.st.Write(context.Background(), p, v, w.tips[p], cs, func(add func(state.Change)) {
				var all []state.Change
				for k := range w.keys {
					if part(k) == p && w.counts[k] > 0 {
						all = append(all, state.Change{Key: windowKey(k, 0), Value: countValue(w.counts[k])})
					}
				}
				slices.SortFunc(all, func(a, b state.Change) int { return bytes.Compare(a.Key, b.Key) })
				for _, c := range all {
					add(c)
				}
			})
			w.tips[p], errs[p] = wr.Tip, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return size
}

// partitioner returns the operator's partition of each key, computed once.
func partitioner(keys int64, parts int) func(int64) int {
	table := make([]int8, keys)
	for k := range keys {
		table[k] = int8(operator.Partition(row.IntV(k).AppendKey(nil), parts))
	}
	return func(k int64) int { return int(table[k]) }
}

// defaultPolicy is the state policy a query gets when its spec leaves
// state: unset (what the engine passes to state.New).
func defaultPolicy(b testing.TB) state.Policy {
	c := mustSpec(b, recoverySpec).State
	return state.Policy{Every: c.SnapshotEvery, Ratio: c.SnapshotRatio}
}

const recoverySpec = `
name: p
source: {kind: rate, rows_per_second: 1}
event_time: timestamp
operator: {kind: tumbling_window, keys: [key], size: 1000d}
sink: {kind: noop}
`

// BenchmarkStateIncremental: 1,000,000 keys, 1% updated per batch, on the
// local disk: bytes written per batch against the encoded size of the
// changed entries, and recovery (open + load + replay into the window
// operator) of that state.
func BenchmarkStateIncremental(b *testing.B) {
	const keys, parts = 1_000_000, 8
	part := partitioner(keys, parts)
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		w := fullStateWorld(b, keys, parts, localCheckpoint(b), part)
		var changed, written int64
		const batches = 10
		for v := int64(2); v < 2+batches; v++ {
			upd := randomKeys(r, keys, keys/100)
			before := w.bytes
			changed += w.batch(b, v, upd, part)
			written += w.bytes - before
		}
		benchsum.Record(b, "state_bytes_per_batch_vs_changed", float64(written)/float64(changed), "ratio", "<=1.5")

		rec, cpu := recoverState(b, w.st, w.tips, keys, parts)
		benchsum.Record(b, "state_recovery_1M_keys_s", rec.Seconds(), "s", "<=2")
		benchsum.Record(b, "state_recovery_1M_keys_cpu_s", cpu.Seconds(), "s", "")
	}
}

// recoverState recovers the state at tips as the engine does it: load
// every partition's chain in parallel, then replay the records into the
// window operator. It returns the wall and CPU time this took.
func recoverState(b *testing.B, st *state.Store, at []state.Tip, keys int64, parts int) (time.Duration, time.Duration) {
	b.Helper()
	t0, c0 := time.Now(), cpuTime()
	op, err := operator.New(mustSpec(b, recoverySpec), operator.Config{Partitions: parts})
	if err != nil {
		b.Fatal(err)
	}
	tips := make([]string, parts)
	for p, t := range at {
		tips[p] = t.Name
	}
	if _, err := st.LoadAll(context.Background(), tips, 8, op.(operator.Reserver).Reserve, op.Restore); err != nil {
		b.Fatal(err)
	}
	rec, cpu := time.Since(t0), cpuTime()-c0
	if got := op.Stats().NumRowsTotal; got != keys {
		b.Fatalf("recovered %d keys, want %d", got, keys)
	}
	return rec, cpu
}

// BenchmarkStateRecoveryDeepChain: the same workload as
// BenchmarkStateIncremental under the default policy, run until the first
// partition writes a snapshot again; recovery is measured from the
// versions just before it, where the chains are longest (the worst case
// the default policy allows at 1% per batch).
func BenchmarkStateRecoveryDeepChain(b *testing.B) {
	const keys, parts = 1_000_000, 8
	part := partitioner(keys, parts)
	r := rand.New(rand.NewPCG(5, 6))
	for b.Loop() {
		w := fullStateWorld(b, keys, parts, localCheckpoint(b), part)
		var deepest []state.Tip
		for v := int64(2); deepest == nil; v++ {
			if v > 5000 {
				b.Fatal("no snapshot in 5000 batches")
			}
			upd := randomKeys(r, keys, keys/100)
			before := slices.Clone(w.tips)
			w.batch(b, v, upd, part)
			for _, t := range w.tips {
				if t.Snapshot && t.Version == v {
					deepest = before
				}
			}
		}
		var files, chain, snap int64
		for _, t := range deepest {
			files += t.Depth + 1
			chain += t.ChainBytes
			snap += t.SnapBytes
		}
		rec, cpu := recoverState(b, w.st, deepest, keys, parts)
		benchsum.Record(b, "state_recovery_deep_chain_versions", float64(deepest[0].Version), "versions", "")
		benchsum.Record(b, "state_recovery_deep_chain_files", float64(files), "files", "")
		benchsum.Record(b, "state_recovery_deep_chain_bytes_vs_snapshot", float64(chain+snap)/float64(snap), "ratio", "")
		benchsum.Record(b, "state_recovery_deep_chain_1M_keys_s", rec.Seconds(), "s", "<=2")
		benchsum.Record(b, "state_recovery_deep_chain_1M_keys_cpu_s", cpu.Seconds(), "s", "")
	}
}

// BenchmarkStateAmortized: the same workload at 100,000 keys (in memory:
// bytes do not depend on the store) over enough batches for every
// partition to write snapshots, so the snapshots' cost is in the figure.
func BenchmarkStateAmortized(b *testing.B) {
	const keys, parts = 100_000, 8
	part := partitioner(keys, parts)
	r := rand.New(rand.NewPCG(3, 4))
	for b.Loop() {
		w := fullStateWorld(b, keys, parts, memstore.New(), part)
		var changed, written int64
		snaps := 0
		for v := int64(2); v < 2+800; v++ {
			upd := randomKeys(r, keys, keys/100)
			before := w.bytes
			changed += w.batch(b, v, upd, part)
			written += w.bytes - before
			for _, t := range w.tips {
				if t.Snapshot && t.Version == v {
					snaps++
				}
			}
		}
		if snaps < parts {
			b.Fatalf("only %d snapshots in 800 batches", snaps)
		}
		benchsum.Record(b, "state_bytes_amortized_vs_changed", float64(written)/float64(changed), "ratio", "<=1.5")
	}
}

// randomKeys is n distinct keys of 0..keys-1 drawn from r: a batch's
// updates.
func randomKeys(r *rand.Rand, keys int64, n int64) []int64 {
	upd := make([]int64, 0, n)
	seen := map[int64]bool{}
	for int64(len(upd)) < n {
		if k := r.Int64N(keys); !seen[k] {
			seen[k] = true
			upd = append(upd, k)
		}
	}
	return upd
}

// keyRange is the keys 0..n-1: an initial state that holds every key.
func keyRange(n int) []int64 {
	all := make([]int64, n)
	for i := range all {
		all[i] = int64(i)
	}
	return all
}
