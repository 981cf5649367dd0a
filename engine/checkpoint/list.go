package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/gateway"
	"golang.org/x/sync/errgroup"
)

// listPrefixes are listed in parallel; together they cover every key of
// the layout (and root-level dotfiles, where temp files of "metadata" go).
var listPrefixes = []string{MetadataKey, ".", OffsetsDir + "/", CommitsDir + "/", SourcesDir + "/", StateDir + "/", CkgateDir + "/"}

// maxStrangers is how many keys outside listPrefixes the single listing
// of the root may meet (about one page of a remote store's listing)
// before it gives up for the listings prefix by prefix.
const maxStrangers = 1000

// listCheckpoint lists the checkpoint and classifies every key of its
// layout. It lists the root once (one request per page on a remote store,
// where a listing per prefix costs a request each even when empty), and
// falls back to listing prefix by prefix in parallel when that listing
// fails (a store may allow listing only some prefixes) or meets more than
// maxStrangers keys outside the layout (a checkpoint beside a large
// directory). Either way the index holds the same keys, added in the same
// order: prefix by prefix, each in lexical order.
func listCheckpoint(ctx context.Context, st gateway.Store, limit int) (*index, error) {
	if results, ok := listRoot(ctx, st); ok {
		return indexOf(results), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return listEachPrefix(ctx, st, limit)
}

// listRoot lists the root once and sorts the keys of the layout by the
// prefix of listPrefixes they fall under; ok is false when the listing
// failed or met more than maxStrangers other keys.
func listRoot(ctx context.Context, st gateway.Store) (results [][]gateway.Attrs, ok bool) {
	results = make([][]gateway.Attrs, len(listPrefixes))
	strangers := 0
	for a, err := range st.List(ctx, "") {
		if err != nil {
			return nil, false
		}
		i := slices.IndexFunc(listPrefixes, func(p string) bool { return strings.HasPrefix(a.Key, p) })
		if i < 0 {
			if strangers++; strangers > maxStrangers {
				return nil, false
			}
			continue
		}
		results[i] = append(results[i], a)
	}
	return results, true
}

// listEachPrefix lists the checkpoint prefix by prefix in parallel (each
// listing paged by the store).
func listEachPrefix(ctx context.Context, st gateway.Store, limit int) (*index, error) {
	results := make([][]gateway.Attrs, len(listPrefixes))
	errs := make([]error, len(listPrefixes))
	var g errgroup.Group
	g.SetLimit(limit)
	for i, p := range listPrefixes {
		g.Go(func() error {
			for a, err := range st.List(ctx, p) {
				if err != nil {
					errs[i] = err
					return nil // every prefix is listed: errs is read below
				}
				results[i] = append(results[i], a)
			}
			return nil
		})
	}
	g.Wait()
	notFound := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, gateway.ErrNotFound):
			notFound++
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			return nil, fmt.Errorf("list %q: %w", listPrefixes[i], err)
		}
	}
	if notFound == len(listPrefixes) {
		return nil, fmt.Errorf("%w: %w", ErrNotCheckpoint, errs[0])
	}
	return indexOf(results), nil
}

// indexOf classifies the listings of listPrefixes, in that order.
func indexOf(results [][]gateway.Attrs) *index {
	idx := newIndex()
	for _, rs := range results {
		for _, a := range rs {
			idx.add(a)
		}
	}
	return idx
}

// index is the classified listing of a checkpoint.
type index struct {
	byKey     map[string]*entry
	metadata  *entry
	offsets   map[int64]*entry
	commits   map[int64]*entry
	sources   map[string]*sourceIdx
	ops       map[string]*opIdx
	writer    *entry
	plan      *entry
	ckgate    int               // files under _ckgate/
	hadoopCRC map[string]*entry // covered key → sidecar
	jsonCRC   map[string]*entry
	temps     []*entry
	ignored   []*entry
	badBatch  []*entry // log files named by a batch id beyond MaxBatchID
	zero      []*entry
	total     int64
	count     int
}

type sourceIdx struct {
	id          string
	files       map[int64]*entry
	compact     map[int64]bool
	latest      int64
	lastCompact int64
}

type opIdx struct {
	id       string
	metaV1   *entry
	metaV2   map[int64]*entry
	schemaV3 map[string][]*entry
	stores   map[string]*storeIdx
	files    int
	bytes    int64
}

type storeIdx struct {
	name   string
	schema *entry
	parts  map[int]*partIdx
}

type partIdx struct {
	id       int
	dir      string
	versions map[int64][]*entry
	aux      map[string]*entry // "SSTs/<name>", "logs/<name>"
	files    int
	bytes    int64
	minV     int64
	maxV     int64
}

func newIndex() *index {
	return &index{
		byKey: map[string]*entry{}, offsets: map[int64]*entry{}, commits: map[int64]*entry{},
		sources: map[string]*sourceIdx{}, ops: map[string]*opIdx{},
		hadoopCRC: map[string]*entry{}, jsonCRC: map[string]*entry{},
	}
}

func (x *index) add(a gateway.Attrs) {
	if _, dup := x.byKey[a.Key]; dup || gateway.IsDirMarker(a.Key) {
		return // a directory marker (Hadoop's mkdirs, through serve) is no file of the checkpoint
	}
	e := classify(a)
	p := &e
	x.byKey[a.Key] = p
	x.total += a.Size
	x.count++
	if a.Size == 0 {
		switch e.kind {
		case entTemp, entDotfile, entUnknown, entCkgateOther, entStateAux:
		default:
			x.zero = append(x.zero, p)
		}
	}
	switch e.kind {
	case entMetadata:
		x.metadata = p
	case entOffsets:
		x.offsets[e.batch] = p
	case entCommit:
		x.commits[e.batch] = p
	case entSourceLog:
		s := x.sources[e.source]
		if s == nil {
			s = &sourceIdx{id: e.source, files: map[int64]*entry{}, compact: map[int64]bool{}, latest: -1, lastCompact: -1}
			x.sources[e.source] = s
		}
		s.files[e.batch] = p
		if e.compact {
			s.compact[e.batch] = true
			s.lastCompact = max(s.lastCompact, e.batch)
		}
		s.latest = max(s.latest, e.batch)
	case entOpMetaV1, entOpMetaV2, entSchemaV3, entSchema, entStateFile, entStateAux, entJSONCRC:
		x.addState(p)
	case entHadoopCRC:
		x.hadoopCRC[e.target] = p
	case entTemp:
		x.temps = append(x.temps, p)
	case entBatchRange:
		x.badBatch = append(x.badBatch, p)
	case entDotfile, entUnknown:
		x.ignored = append(x.ignored, p)
	case entWriter:
		x.writer = p
		x.ckgate++
	case entPlan:
		x.plan = p
		x.ckgate++
	case entCkgateOther:
		x.ckgate++
	}
	if e.kind == entUnknown && strings.HasPrefix(a.Key, StateDir+"/") {
		// unknown files inside state/ still count for the operator
		if segs := strings.SplitN(a.Key, "/", 3); len(segs) == 3 {
			op := x.op(segs[1])
			op.files++
			op.bytes += a.Size
		}
	}
}

func (x *index) op(id string) *opIdx {
	o := x.ops[id]
	if o == nil {
		o = &opIdx{id: id, metaV2: map[int64]*entry{}, schemaV3: map[string][]*entry{}, stores: map[string]*storeIdx{}}
		x.ops[id] = o
	}
	return o
}

func (x *index) addState(e *entry) {
	if e.kind == entJSONCRC {
		x.jsonCRC[e.target] = e
	}
	o := x.op(e.op)
	o.files++
	o.bytes += e.Size
	switch e.kind {
	case entOpMetaV1:
		o.metaV1 = e
		return
	case entOpMetaV2:
		o.metaV2[e.batch] = e
		return
	case entSchemaV3:
		o.schemaV3[e.store] = append(o.schemaV3[e.store], e)
		return
	}
	s := o.stores[e.store]
	if s == nil {
		s = &storeIdx{name: e.store, parts: map[int]*partIdx{}}
		o.stores[e.store] = s
	}
	if e.kind == entSchema {
		if e.part == 0 {
			s.schema = e
		}
		return
	}
	p := s.parts[e.part]
	if p == nil {
		p = &partIdx{id: e.part, dir: StoreDirKey(e.op, e.part, e.store), versions: map[int64][]*entry{}, aux: map[string]*entry{}, minV: -1, maxV: -1}
		s.parts[e.part] = p
	}
	p.files++
	p.bytes += e.Size
	switch e.kind {
	case entStateFile:
		p.versions[e.file.Version] = append(p.versions[e.file.Version], e)
		if p.minV < 0 || e.file.Version < p.minV {
			p.minV = e.file.Version
		}
		p.maxV = max(p.maxV, e.file.Version)
	case entStateAux:
		segs := strings.Split(e.Key, "/")
		p.aux[strings.Join(segs[len(segs)-2:], "/")] = e
	}
}

// isCheckpoint reports whether anything of a checkpoint was listed.
func (x *index) isCheckpoint() bool {
	return x.metadata != nil || len(x.offsets) > 0 || len(x.commits) > 0 || len(x.ops) > 0 || x.ckgate > 0
}

// ranges compresses sorted ids into inclusive ranges.
func ranges(ids []int64) []Range {
	out := []Range{}
	for _, id := range ids {
		if n := len(out); n > 0 && out[n-1][1]+1 == id {
			out[n-1][1] = id
			continue
		}
		out = append(out, Range{id, id})
	}
	return out
}

// gaps returns the ids missing between consecutive sorted ids, as ranges.
func gaps(sorted []int64) []Range {
	var out []Range
	for i := 1; i < len(sorted); i++ {
		if sorted[i] > sorted[i-1]+1 {
			out = append(out, Range{sorted[i-1] + 1, sorted[i] - 1})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, compareNumeric)
	return ks
}

// compareNumeric orders decimal names numerically, then others bytewise.
func compareNumeric(a, b string) int {
	da, db := gateway.AllDigits(a), gateway.AllDigits(b)
	switch {
	case da && db:
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	case da:
		return -1
	case db:
		return 1
	}
	return strings.Compare(a, b)
}
