package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Compactible logs (CompactibleFileStreamLog): the file source's
// sources/<i>/ and the file sink's <output>/_spark_metadata/. Files are
// named N or N.compact; a compaction batch N ((N+1) % interval == 0) holds
// every entry up to N. Content: "v1", then one JSON entry per line.

// CompactibleLogMaxVersion is the highest version of those logs understood.
const CompactibleLogMaxVersion = 1

// DefaultCompactInterval is Spark's default compact interval for the file
// source and file sink logs.
const DefaultCompactInterval = 10

// ParseLogFileName parses "N" or "N.compact". Names that do not parse are
// not log files (Spark ignores them: dotfiles, temp files), and neither are
// names whose number is beyond MaxBatchID (ParseLogName tells those apart).
func ParseLogFileName(name string) (id int64, compact, ok bool) {
	id, compact, err := ParseLogName(name)
	return id, compact, err == nil
}

// ParseLogName parses "N" or "N.compact" as ParseLogFileName does; a name
// whose number is beyond MaxBatchID is ErrBatchRange.
func ParseLogName(name string) (id int64, compact bool, err error) {
	base, compact := strings.CutSuffix(name, ".compact")
	id, err = ParseBatchID(base)
	if err != nil {
		return 0, false, err
	}
	return id, compact, nil
}

// IsCompactionBatch reports whether batch id is a compaction batch.
func IsCompactionBatch(id int64, interval int) bool {
	return interval > 0 && (id+1)%int64(interval) == 0
}

// DeriveCompactInterval mirrors Spark's deriveCompactInterval: the
// interval that made latestCompact a compaction batch, starting from def
// (the smallest divisor of latestCompact+1 that is at least def, when one is
// below half of it). The divisor search stops after 1<<20 candidates.
func DeriveCompactInterval(def int, latestCompact int64) int {
	n := latestCompact + 1
	if def < 1 {
		def = 1
	}
	if n <= int64(def) {
		return int(n)
	}
	if int64(def) < n/2 {
		for i := int64(def); i <= n/2 && i < int64(def)+1<<20; i++ {
			if n%i == 0 {
				return int(i)
			}
		}
	}
	return int(n)
}

// ValidBatchStart returns the first batch whose file is needed to read
// every entry up to latest: the latest compaction batch ≤ latest (0 when
// none).
func ValidBatchStart(latest int64, interval int) int64 {
	if interval <= 0 {
		interval = 1
	}
	return max(0, (latest+1)/int64(interval)*int64(interval)-1)
}

// ValidBatches returns the batch ids whose files hold every entry up to
// latest: the latest compaction batch ≤ latest, then the later ones.
func ValidBatches(latest int64, interval int) []int64 {
	if latest < 0 || interval <= 0 {
		return nil
	}
	var out []int64
	for id := ValidBatchStart(latest, interval); id <= latest; id++ {
		out = append(out, id)
	}
	return out
}

func decodeCompactibleLog[T any](data []byte, what string) ([]T, error) {
	lines := splitLines(data)
	return decodeCompactibleLines[T](func(yield func([]byte, error) bool) {
		for _, l := range lines {
			if !yield([]byte(l), nil) {
				return
			}
		}
	}, what)
}

// decodeCompactibleLines decodes a compactible log from its lines: "v1",
// then one JSON entry per line. Only the entries are kept, so a log streamed
// line by line (gateway.Lines) never sits in memory whole. A read error of
// the lines is returned as it is.
func decodeCompactibleLines[T any](lines iter.Seq2[[]byte, error], what string) ([]T, error) {
	var (
		out     []T
		n       int
		pending error // the JSON error of line n, if it is not the last
	)
	for l, err := range lines {
		if err != nil {
			return nil, err
		}
		n++
		if pending != nil {
			return nil, corruptf("%s line %d: %v", what, n-1, pending)
		}
		if n == 1 {
			if _, err := parseVersionLine(strings.TrimSuffix(string(l), "\r"), CompactibleLogMaxVersion, what); err != nil {
				return nil, err
			}
			continue
		}
		var e T
		if err := json.Unmarshal(bytes.TrimSuffix(l, []byte{'\r'}), &e); err != nil {
			pending = err
			continue
		}
		out = append(out, e)
	}
	if n == 0 {
		return nil, truncatedf("%s: empty file", what)
	}
	if pending != nil { // the last line: the file may be cut short
		return nil, jsonErr(fmt.Sprintf("%s line %d", what, n), pending)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

func encodeCompactibleLog[T any](entries []T) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("v1")
	for _, e := range entries {
		j, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		b.WriteByte('\n')
		b.Write(j)
	}
	return b.Bytes(), nil
}

// compactibleListing is the listing of one compactible log directory.
type compactibleListing struct {
	files   map[int64]string // id → key
	compact map[int64]bool
	latest  int64
	lastCmp int64
}

func listCompactible(ctx context.Context, st gateway.Store, dir string) (*compactibleListing, error) {
	dir = strings.TrimSuffix(dir, "/")
	prefix := dir + "/"
	if dir == "" {
		prefix = ""
	}
	l := &compactibleListing{files: map[int64]string{}, compact: map[int64]bool{}, latest: -1, lastCmp: -1}
	for a, err := range st.List(ctx, prefix) {
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(a.Key, prefix)
		if strings.Contains(name, "/") {
			continue
		}
		id, cmp, err := ParseLogName(name)
		if errors.Is(err, ErrBatchRange) {
			return nil, fmt.Errorf("%s: %w", a.Key, err)
		}
		if err != nil {
			continue
		}
		l.files[id] = a.Key
		if cmp {
			l.compact[id] = true
			l.lastCmp = max(l.lastCmp, id)
		}
		l.latest = max(l.latest, id)
	}
	return l, nil
}

// listLog lists the log under dir, which must hold a batch (ErrNotFound).
func listLog(ctx context.Context, st gateway.Store, dir, what string) (*compactibleListing, error) {
	l, err := listCompactible(ctx, st, dir)
	if err == nil && l.latest < 0 {
		err = fmt.Errorf("%s: %w: no %s files", dir, gateway.ErrNotFound, what)
	}
	return l, err
}

// readCompactibleLog reads every entry up to the latest batch of the log
// under dir: the latest compaction file and the later batches.
func readCompactibleLog[T any](ctx context.Context, st gateway.Store, dir, what string) ([]T, int64, error) {
	l, err := listLog(ctx, st, dir, what)
	if err != nil {
		return nil, -1, err
	}
	interval := DefaultCompactInterval
	if l.lastCmp >= 0 {
		interval = DeriveCompactInterval(DefaultCompactInterval, l.lastCmp)
	}
	return readCompactibleFrom[T](ctx, st, dir, what, l, ValidBatchStart(l.latest, interval), interval)
}

// readCompactibleTail reads the log under dir from its latest compaction
// file on, or from its first batch when it has none: a log that need not
// start at batch 0.
func readCompactibleTail[T any](ctx context.Context, st gateway.Store, dir, what string) ([]T, int64, error) {
	l, err := listLog(ctx, st, dir, what)
	if err != nil {
		return nil, -1, err
	}
	start := l.lastCmp
	if start < 0 {
		start = slices.Min(sortedIDs(l.files))
	}
	return readCompactibleFrom[T](ctx, st, dir, what, l, start, DefaultCompactInterval)
}

// readCompactibleFrom reads every entry of the batches start to the
// latest of the listed log (interval only names the cause of a gap).
func readCompactibleFrom[T any](ctx context.Context, st gateway.Store, dir, what string, l *compactibleListing, start int64, interval int) ([]T, int64, error) {
	var out []T
	for id := start; id <= l.latest; id++ {
		key, ok := l.files[id]
		if !ok {
			return nil, l.latest, fmt.Errorf("%s: batch %d of the %s is missing (latest %d, compact interval %d): %w",
				dir, id, what, l.latest, interval, gateway.ErrNotFound)
		}
		// Streamed line by line: a compaction file holds every entry since
		// batch 0 and legitimately grows; each line is bounded instead.
		es, err := decodeCompactibleLines[T](gateway.Lines(ctx, st, key, 0), what)
		if gateway.KindOf(err) != nil {
			return nil, l.latest, err
		}
		if err != nil {
			return nil, l.latest, keyErr(key, err)
		}
		out = append(out, es...)
	}
	return out, l.latest, nil
}

// sortedIDs returns the keys of m in order.
func sortedIDs[V any](m map[int64]V) []int64 { return slices.Sorted(maps.Keys(m)) }
