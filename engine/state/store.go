package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Policy says when a partition gets a snapshot instead of a delta: when
// the deltas since the last snapshot, the new one included, add up to at
// least Ratio × that snapshot's size, or when the chain would otherwise
// hold more than Every deltas, whichever comes first.
type Policy struct {
	// Every (K) caps the deltas in a chain, and so the files a recovery
	// reads per partition (default 10).
	Every int
	// Ratio bounds the bytes written per batch: a snapshot of S bytes is
	// written after about Ratio·S bytes of deltas, so it adds at most
	// 1/Ratio to the bytes of the deltas. 0: no ratio rule (a snapshot
	// every K deltas).
	Ratio float64
}

// Tip describes the file that holds a partition's current state.
type Tip struct {
	Name       string // file name in the partition directory; "" = empty state
	Version    int64
	Snapshot   bool
	Depth      int64
	ChainBytes int64
	SnapBytes  int64
}

// Store reads and writes the state files of one operator.
type Store struct {
	st     gateway.Store
	dir    string // state/<operator>
	policy Policy
}

// New returns the store of operator op under st (state/<op>/...).
func New(st gateway.Store, op int, p Policy) *Store {
	if p.Every <= 0 {
		p.Every = 10
	}
	return &Store{st: st, dir: "state/" + strconv.Itoa(op), policy: p}
}

// Key returns the object key of a partition's file.
func (s *Store) Key(part int, name string) string {
	return s.dir + "/" + strconv.Itoa(part) + "/" + name
}

// FileName is the unique name of a new file: <version>_<write id>.<kind>.
func FileName(version int64, snapshot bool) string {
	var id [6]byte
	_, _ = rand.Read(id[:])
	kind := "delta"
	if snapshot {
		kind = "snapshot"
	}
	return strconv.FormatInt(version, 10) + "_" + hex.EncodeToString(id[:]) + "." + kind
}

// ParseFileName returns the version of a state file name.
func ParseFileName(name string) (version int64, snapshot bool, ok bool) {
	base, snapshot := strings.CutSuffix(name, ".snapshot")
	if !snapshot {
		var d bool
		if base, d = strings.CutSuffix(name, ".delta"); !d {
			return 0, false, false
		}
	}
	v, _, _ := strings.Cut(base, "_")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, false
	}
	return n, snapshot, true
}

// Loaded is what Load read: the tip and the bytes and files it took.
type Loaded struct {
	Tip   Tip
	Files int
	Bytes int64
}

// Load rebuilds partition part from the chain ending at tip: it calls
// apply once for every entry of the state at tip, keys ascending (each a
// put: the newest record of its key in the chain; a key whose newest
// record is a delete is not in the state).
func (s *Store) Load(ctx context.Context, part int, tip string, apply func(Change) error) (Loaded, error) {
	l, recs, err := s.loadRecs(ctx, part, tip)
	if err != nil {
		return l, err
	}
	for _, c := range recs {
		if err := apply(c); err != nil {
			return l, err
		}
	}
	return l, nil
}

// decodeAll returns the header and records of a state file (aliasing
// data).
func decodeAll(data []byte) (Header, []Change, error) {
	recs := make([]Change, 0, len(data)/32) // a guess: small keys and values
	h, err := Decode(data, func(c Change) error {
		recs = append(recs, c)
		return nil
	})
	return h, recs, err
}

// loadRecs returns the entries of partition part at tip, keys ascending.
func (s *Store) loadRecs(ctx context.Context, part int, tip string) (Loaded, []Change, error) {
	var out Loaded
	if tip == "" {
		return out, nil, nil
	}
	type file struct {
		key  string
		recs []Change
	}
	var chain []file
	for name := tip; name != ""; {
		if len(chain) > 100000 {
			return out, nil, fmt.Errorf("%s: state chain longer than 100000 files", s.Key(part, tip))
		}
		key := s.Key(part, name)
		data, _, err := s.st.Get(ctx, key)
		if err != nil {
			return out, nil, fmt.Errorf("state partition %d: %w", part, err)
		}
		h, recs, err := decodeAll(data)
		if err != nil {
			return out, nil, fmt.Errorf("%s: %w", key, err)
		}
		if len(chain) == 0 {
			out.Tip = Tip{Name: tip, Version: h.Version, Snapshot: h.Snapshot, Depth: h.Depth, ChainBytes: h.ChainBytes, SnapBytes: h.SnapBytes}
			if h.Snapshot {
				out.Tip.SnapBytes = int64(len(data))
			}
		}
		chain = append(chain, file{key, recs})
		out.Bytes += int64(len(data))
		name = h.Base
	}
	out.Files = len(chain)
	if len(chain) == 1 {
		return out, chain[0].recs, nil
	}
	// every file holds its keys in ascending order: merge them, the newest
	// record of each key winning, so each live entry is applied once
	// (a long chain of small deltas over a large snapshot costs a merge,
	// not a map update per record)
	files := make([][]Change, len(chain)) // files[0] is the tip, the newest
	most := 0
	for i, f := range chain {
		files[i] = f.recs
		most = max(most, len(f.recs))
	}
	return out, mergeNewest(files, make([]Change, 0, most+most/8)), nil
}

// mergeNewest appends to out, keys ascending, the newest record of every
// key in files (each ascending; files[0] the newest) that is a put.
func mergeNewest(files [][]Change, out []Change) []Change {
	pos := make([]int, len(files))
	// a binary min-heap of file indexes by (current key, index)
	h := make([]int, 0, len(files))
	less := func(a, b int) bool {
		if c := bytes.Compare(files[a][pos[a]].Key, files[b][pos[b]].Key); c != 0 {
			return c < 0
		}
		return a < b
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && less(h[r], h[l]) {
				m = r
			}
			if !less(h[m], h[i]) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for f := range files {
		if len(files[f]) > 0 {
			h = append(h, f)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	// advance moves the top file to its next record (or drops it)
	advance := func() {
		f := h[0]
		pos[f]++
		if pos[f] == len(files[f]) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	for len(h) > 0 {
		c := files[h[0]][pos[h[0]]]
		advance()
		for len(h) > 0 && bytes.Equal(files[h[0]][pos[h[0]]].Key, c.Key) {
			advance() // an older record of the same key
		}
		if !c.Delete {
			out = append(out, c)
		}
	}
	return out
}

// Written is what Write wrote.
type Written struct {
	Tip   Tip
	Key   string
	Bytes int64
}

// Write stores version of partition part on top of prev: a delta of
// changes (keys ascending), or, when the policy says so, a snapshot of all
// (called only then; it must yield every entry in ascending key order).
// The file is created with a fresh unique name and never overwritten.
func (s *Store) Write(ctx context.Context, part int, version int64, prev Tip, changes []Change, all func(add func(Change))) (Written, error) {
	var size int64
	for _, c := range changes {
		size += c.EncodedSize()
	}
	// a chain never starts from nothing: the first file of a partition is
	// a snapshot (it holds the whole state anyway)
	snapshot := prev.Name == "" || prev.Depth+1 > int64(s.policy.Every) ||
		(s.policy.Ratio > 0 && float64(prev.ChainBytes+size) >= s.policy.Ratio*float64(prev.SnapBytes))
	var h Header
	var enc *Encoder
	if snapshot {
		h = Header{Snapshot: true, Version: version}
		enc = NewEncoder(h, int(prev.SnapBytes+prev.ChainBytes))
		all(enc.Add)
	} else {
		h = Header{Version: version, Depth: prev.Depth + 1, SnapBytes: prev.SnapBytes, Base: prev.Name}
		h.ChainBytes = prev.ChainBytes + size + 32 + int64(len(prev.Name))
		enc = NewEncoder(h, int(size))
		for _, c := range changes {
			enc.Add(c)
		}
	}
	data, err := enc.Finish()
	if err != nil {
		return Written{}, fmt.Errorf("state partition %d version %d: %w", part, version, err)
	}
	name := FileName(version, snapshot)
	key := s.Key(part, name)
	if _, err := s.st.Put(ctx, key, data, gateway.IfAbsent()); err != nil {
		return Written{}, fmt.Errorf("state partition %d: %w", part, err)
	}
	tip := Tip{Name: name, Version: version, Snapshot: snapshot, Depth: h.Depth, ChainBytes: h.ChainBytes, SnapBytes: h.SnapBytes}
	if snapshot {
		tip.SnapBytes = int64(len(data))
	}
	return Written{Tip: tip, Key: key, Bytes: int64(len(data))}, nil
}

// Dir is the operator's directory (state/<op>).
func (s *Store) Dir() string { return s.dir }

// PartitionDir is the directory of partition part.
func (s *Store) PartitionDir(part int) string { return path.Join(s.dir, strconv.Itoa(part)) }

// LoadAll rebuilds many partitions: tips[p] is partition p's tip ("" for
// empty). Files are read and checked by up to workers goroutines at once,
// while the records of the partitions already read are handed to apply,
// partition by partition in order, from the calling goroutine (so apply
// needs no locking). reserve, when set, is told each partition's record
// count first.
func (s *Store) LoadAll(ctx context.Context, tips []string, workers int, reserve func(p, n int), apply func(p int, c Change) error) ([]Loaded, error) {
	if workers < 1 {
		workers = 1
	}
	type result struct {
		l    Loaded
		recs []Change
		err  error
	}
	results := make([]result, len(tips))
	done := make([]chan struct{}, len(tips))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, workers)
	for p := range tips {
		done[p] = make(chan struct{})
		go func() {
			defer close(done[p])
			if tips[p] == "" {
				return
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[p].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			l, recs, err := s.loadRecs(ctx, p, tips[p])
			results[p] = result{l, recs, err}
		}()
	}
	out := make([]Loaded, len(tips))
	var first error
	for p := range tips {
		<-done[p]
		if first != nil {
			continue // wait for every goroutine before returning
		}
		r := results[p]
		if r.err != nil {
			first = r.err
			cancel()
			continue
		}
		if reserve != nil && len(r.recs) > 0 {
			reserve(p, len(r.recs))
		}
		for _, c := range r.recs {
			if err := apply(p, c); err != nil {
				first = fmt.Errorf("%s: %w", s.Key(p, tips[p]), err)
				cancel()
				break
			}
		}
		results[p].recs = nil
		out[p] = r.l
	}
	return out, first
}
