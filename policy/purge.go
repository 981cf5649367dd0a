package policy

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
)

// PurgeFacts are what a delete of a log entry is decided on (input.purge):
// where the entry stands in its log, so that a query's own purge of the
// entries no restart needs (Spark's minBatchesToRetain, its compacted file
// logs) can be told from a delete that loses data.
//
//   - log: "offsets", "commits", "sources" (sources/S/N) or
//     "spark_metadata" (a file sink's _spark_metadata/N);
//   - batch: the entry's batch id (N of N or N.compact);
//   - latest_offsets, latest_commit: the newest offsets/N and commits/N of
//     the root (absent when there is none);
//   - restart_floor: min(latest_offsets − 1, latest_commit). A restart reads
//     offsets/L and offsets/L−1 (Spark fails when L−1 is missing) and the
//     newest commits/N, so every entry of offsets/ and commits/ below the
//     floor can go, and none at or above it (absent with no commit);
//   - latest_compact: the newest N.compact of the entry's file log: every
//     entry below it is covered by it (absent when there is none).
//
// The numbers come from one listing of the log directories, made when such
// a delete is decided. A log only grows at its head and loses entries only
// below its floor, so a floor once seen stays true: a delete below it needs
// no new listing.
type PurgeFacts struct {
	Log           string `json:"log"`
	Batch         int64  `json:"batch"`
	LatestOffsets *int64 `json:"latest_offsets,omitempty"`
	LatestCommit  *int64 `json:"latest_commit,omitempty"`
	RestartFloor  *int64 `json:"restart_floor,omitempty"`
	LatestCompact *int64 `json:"latest_compact,omitempty"`
}

// purgeHeads are the newest entries seen in the log directories of one
// root or file log, by the key prefix of the directory they were listed in.
type purgeHeads struct {
	offsets, commits, compact *int64
}

// purgeEntry says which log a location's entry belongs to, its batch, and
// the key of the directory that holds the log's head (the root for offsets
// and commits, the log's own directory for a compacted file log). ok is
// false for a location that is not such an entry (metadata, a sink's
// owner record).
func purgeEntry(loc string, roots []string) (log string, batch int64, dir string, ok bool) {
	d, name := splitLocation(loc)
	pd, parent := splitLocation(d)
	n, err := strconv.ParseInt(strings.TrimSuffix(name, ".compact"), 10, 64)
	if err != nil || !gateway.AllDigits(strings.TrimSuffix(name, ".compact")) {
		return "", 0, "", false
	}
	if parent == "_spark_metadata" {
		return "spark_metadata", n, d, true
	}
	for i := len(roots) - 1; i >= 0; i-- {
		rel, ok := strings.CutPrefix(loc, strings.TrimSuffix(roots[i], "/")+"/")
		if !ok || !logEntryRel(rel) {
			continue
		}
		switch {
		case parent == "offsets" && !strings.HasSuffix(name, ".compact"):
			return "offsets", n, pd, true
		case parent == "commits" && !strings.HasSuffix(name, ".compact"):
			return "commits", n, pd, true
		case strings.HasPrefix(rel, "sources/"):
			return "sources", n, d, true
		}
	}
	return "", 0, "", false
}

// purgeFacts returns input.purge for a delete of loc, or nil when loc is
// not a purgeable kind of log entry or its log cannot be read through the
// guarded store (the policy then sees no facts and refuses, as before).
func (a *Authorizer) purgeFacts(ctx context.Context, loc string, roots []string) *PurgeFacts {
	log, batch, dir, ok := purgeEntry(loc, roots)
	if !ok || a.list == nil {
		return nil
	}
	prefix, ok := a.keyOf(dir)
	if !ok {
		return nil
	}
	f := &PurgeFacts{Log: log, Batch: batch}
	a.mu.Lock()
	h, seen := a.heads[prefix]
	a.mu.Unlock()
	if !seen || !h.covers(log, batch) {
		var err error
		if h, err = a.readHeads(ctx, log, prefix); err != nil {
			return nil
		}
		a.mu.Lock()
		if a.heads == nil {
			a.heads = map[string]purgeHeads{}
		}
		if len(a.heads) < 4096 {
			a.heads[prefix] = h
		}
		a.mu.Unlock()
	}
	switch log {
	case "offsets", "commits":
		f.LatestOffsets, f.LatestCommit = h.offsets, h.commits
		if h.commits != nil {
			floor := *h.commits
			if h.offsets != nil && *h.offsets-1 < floor {
				floor = *h.offsets - 1
			}
			f.RestartFloor = &floor
		}
	default:
		f.LatestCompact = h.compact
	}
	return f
}

// covers reports whether heads already seen put batch below the floor of
// its log, so that no new listing can change the answer.
func (h purgeHeads) covers(log string, batch int64) bool {
	switch log {
	case "offsets", "commits":
		if h.offsets == nil || h.commits == nil {
			return false
		}
		return batch < min(*h.offsets-1, *h.commits)
	}
	return h.compact != nil && batch < *h.compact
}

// readHeads lists the log directories below prefix (a key of the guarded
// store, "" for its root) for their newest entries.
func (a *Authorizer) readHeads(ctx context.Context, log, prefix string) (purgeHeads, error) {
	var h purgeHeads
	var err error
	switch log {
	case "offsets", "commits":
		if h.offsets, err = a.newestBatch(ctx, joinKey(prefix, "offsets/"), false); err != nil {
			return h, err
		}
		h.commits, err = a.newestBatch(ctx, joinKey(prefix, "commits/"), false)
	default:
		h.compact, err = a.newestBatch(ctx, joinKey(prefix, ""), true)
	}
	return h, err
}

// newestBatch is the highest batch id among the keys directly below
// prefix (a directory key ending in '/', or "" for the store's root) named
// N (compact false) or N.compact (compact true).
func (a *Authorizer) newestBatch(ctx context.Context, prefix string, compact bool) (*int64, error) {
	var best *int64
	for at, err := range a.list(ctx, prefix) {
		if err != nil {
			if errors.Is(err, gateway.ErrNotFound) {
				break
			}
			return nil, err
		}
		name, ok := strings.CutPrefix(at.Key, prefix)
		if !ok || strings.Contains(name, "/") {
			continue
		}
		if compact {
			var ok bool
			if name, ok = strings.CutSuffix(name, ".compact"); !ok {
				continue
			}
		}
		if !gateway.AllDigits(name) {
			continue
		}
		n, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			continue
		}
		if best == nil || n > *best {
			best = &n
		}
	}
	return best, nil
}

// keyOf is the key of the guarded store at a canonical location inside its
// root ("" for the root itself); ok is false for a location outside it.
func (a *Authorizer) keyOf(loc string) (string, bool) {
	base := strings.TrimSuffix(a.base, "/")
	if loc == base || loc == a.base {
		return "", true
	}
	rel, ok := strings.CutPrefix(loc, base+"/")
	return rel, ok && rel != ""
}

// joinKey joins a directory key and a name below it.
func joinKey(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func (f *PurgeFacts) term() *ast.Term {
	items := [][2]*ast.Term{item("log", str(f.Log)), item("batch", ast.IntNumberTerm(int(f.Batch)))}
	add := func(k string, v *int64) {
		if v != nil {
			items = append(items, item(k, ast.IntNumberTerm(int(*v))))
		}
	}
	add("latest_offsets", f.LatestOffsets)
	add("latest_commit", f.LatestCommit)
	add("restart_floor", f.RestartFloor)
	add("latest_compact", f.LatestCompact)
	return ast.ObjectTerm(items...)
}
