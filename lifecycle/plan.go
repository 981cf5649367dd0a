package lifecycle

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// DefaultMinBatches is Spark's spark.sql.streaming.minBatchesToRetain.
const DefaultMinBatches = 100

// DefaultLogRetention is how long _ckgate/ ledgers are kept by default.
const DefaultLogRetention = 7 * 24 * time.Hour

// ErrBadPolicy: a RetentionPolicy that cannot be applied.
var ErrBadPolicy = errors.New("bad retention policy")

// RetentionPolicy says what to retain.
type RetentionPolicy struct {
	// MinBatches is how many of the latest batches of offsets/ and commits/
	// are kept (0: DefaultMinBatches).
	MinBatches int
	// RetainFor also keeps every batch whose log entry is younger than this
	// (0: none), e.g. the source's outage window.
	RetainFor time.Duration
	// LogRetention is the age beyond which _ckgate/ ledgers of removed
	// batches go (0: DefaultLogRetention).
	LogRetention time.Duration
	// Now is the planner's clock; required when ages matter.
	Now time.Time
}

// Deps are the files a state file is rebuilt from.
type Deps struct {
	// Keys are checkpoint keys (relative to the root).
	Keys []string
	// Complete: Keys are the whole rebuild set (a changelog's lineage);
	// otherwise each key's own Deps are followed (ckgate's base chain).
	Complete bool
}

// Listing is what RetentionPlan works on: the checkpoint's keys and what ReadListing decoded.
type Listing struct {
	Objects []gateway.Attrs
	// Commits holds the decoded commits of the batches whose state must be
	// kept (R-1 … C); a missing one makes the planner keep unique-id state.
	Commits map[int64]*checkpoint.CommitMetadata
	// Deps maps a unique-id state file to the files it is rebuilt from.
	// A snapshot or zip needs none. A non-base file without an entry makes
	// the planner keep its store directory.
	Deps map[string]Deps
	// Zips maps a RocksDB snapshot (<v>.zip, <v>_<uuid>.zip) to the SST and
	// log files its metadata names. ReadListing fills it for the zips the plan
	// keeps in store directories that hold SSTs/ or logs/; a kept zip
	// without an entry makes the planner keep every SST and log file of
	// its directory.
	Zips map[string]ZipRefs
	// Sink marks the listing of a file sink's output directory (ReadSinkListing),
	// not a checkpoint: only its _spark_metadata/ manifest log is a
	// retention candidate; data files are never removed.
	Sink bool
}

// ZipRefs is what ReadListing learnt from one RocksDB zip.
type ZipRefs struct {
	// Keys are the SSTs/… and logs/… keys (relative to the root) the zip's
	// metadata names.
	Keys []string
	// Err, when not empty, says why the zip could not be read or decoded.
	Err string
}

// Action of a decision.
const (
	Keep   = "keep"
	Remove = "remove"
)

// Decision is one key's fate.
type Decision struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// RetentionResult is a retention plan.
type RetentionResult struct {
	LatestOffsets *int64 `json:"latest_offsets_batch"`
	LatestCommit  *int64 `json:"latest_commit_batch"`
	// RetainFrom is R, the oldest retained batch (nil: no batch).
	RetainFrom   *int64     `json:"retain_from"`
	Keep         []Decision `json:"keep"`
	Remove       []Decision `json:"remove"`
	RemovedBytes int64      `json:"removed_bytes"`
}

// Obsolete returns the removed keys and their reasons, as policy.Plan wants.
func (r *RetentionResult) Obsolete() map[string]string {
	m := make(map[string]string, len(r.Remove))
	for _, d := range r.Remove {
		m[d.Key] = d.Reason
	}
	return m
}

// Bounds are the batch numbers the planner derives from the logs.
type Bounds struct {
	Latest    *int64 // L, the latest offsets batch
	Committed *int64 // C, the latest commit
	// RetainFrom is R: offsets and commits below it go.
	RetainFrom *int64
	// Commits are the batch ids of the listed commits, ascending.
	Commits []int64
}

// RetainedCommits returns the listed commits whose state is kept
// (R-1 … C), ascending. It walks the listed ids, never the numbers between
// them, so a far-apart pair of commits costs two steps.
func (b Bounds) RetainedCommits() []int64 {
	if b.RetainFrom == nil || b.Committed == nil {
		return nil
	}
	from := max(*b.RetainFrom-1, 0)
	i, _ := slices.BinarySearch(b.Commits, from)
	j, _ := slices.BinarySearch(b.Commits, *b.Committed+1)
	return b.Commits[i:j]
}

func (p RetentionPolicy) withDefaults() (RetentionPolicy, error) {
	if p.MinBatches == 0 {
		p.MinBatches = DefaultMinBatches
	}
	if p.MinBatches < 1 {
		return p, fmt.Errorf("%w: min batches %d: want 1 or more", ErrBadPolicy, p.MinBatches)
	}
	if p.RetainFor < 0 || p.LogRetention < 0 {
		return p, fmt.Errorf("%w: negative duration", ErrBadPolicy)
	}
	if p.LogRetention == 0 {
		p.LogRetention = DefaultLogRetention
	}
	if p.Now.IsZero() {
		return p, fmt.Errorf("%w: no clock (Policy.Now)", ErrBadPolicy)
	}
	return p, nil
}

// logID parses "offsets/N" or "commits/N".
func logID(key, dir string) (int64, bool) {
	id, ok, _ := logIDChecked(key, dir)
	return id, ok
}

// logIDChecked is logID with a name beyond checkpoint.MaxBatchID an error
// naming key.
func logIDChecked(key, dir string) (int64, bool, error) {
	rest, ok := strings.CutPrefix(key, dir+"/")
	if !ok || strings.Contains(rest, "/") {
		return 0, false, nil
	}
	id, compact, err := checkpoint.ParseLogName(rest)
	if errors.Is(err, checkpoint.ErrBatchRange) && !compact {
		return 0, false, fmt.Errorf("%s: %w", key, err)
	}
	if err != nil || compact {
		return 0, false, nil
	}
	return id, true, nil
}

// ComputeBounds derives L, C and R from the listing's offsets/ and commits/.
func ComputeBounds(objs []gateway.Attrs, p RetentionPolicy) (Bounds, error) {
	p, err := p.withDefaults()
	if err != nil {
		return Bounds{}, err
	}
	var b Bounds
	young := int64(-1)
	cutoff := p.Now.Add(-p.RetainFor)
	for _, o := range objs {
		for _, dir := range []string{checkpoint.OffsetsDir, checkpoint.CommitsDir} {
			id, ok, err := logIDChecked(o.Key, dir)
			if err != nil {
				return Bounds{}, err
			}
			if !ok {
				continue
			}
			ptr := &b.Latest
			if dir == checkpoint.CommitsDir {
				ptr = &b.Committed
				b.Commits = append(b.Commits, id)
			}
			if *ptr == nil || id > **ptr {
				v := id
				*ptr = &v
			}
			if p.RetainFor > 0 && o.Modified.After(cutoff) && (young < 0 || id < young) {
				young = id
			}
		}
	}
	top := b.Latest
	if top == nil || (b.Committed != nil && *b.Committed > *top) {
		top = b.Committed
	}
	slices.Sort(b.Commits)
	if top == nil {
		return b, nil
	}
	r := *top - int64(p.MinBatches) + 1
	if b.Committed != nil {
		r = min(r, *b.Committed)
	}
	if b.Latest != nil {
		r = min(r, *b.Latest-1) // offsets/L-1: Spark refuses to restart without it
		if b.Committed == nil || *b.Committed < *b.Latest {
			r = min(r, *b.Latest) // the in-flight batch
		}
	}
	if young >= 0 {
		r = min(r, young)
	}
	r = max(r, 0)
	b.RetainFrom = &r
	return b, nil
}

// planner holds the decisions being made.
type planner struct {
	p       RetentionPolicy
	b       Bounds
	objs    map[string]gateway.Attrs
	dec     map[string]Decision
	listing Listing
}

func (pl *planner) set(key, action, reason string) {
	if _, done := pl.dec[key]; done {
		return
	}
	pl.dec[key] = Decision{Key: key, Size: pl.objs[key].Size, Action: action, Reason: reason}
}

// RetentionPlan decides, for every key of the listing, whether retention keeps or
// removes it, and why. It reads nothing: ReadListing gathers what it needs.
func RetentionPlan(l Listing, p RetentionPolicy) (*RetentionResult, error) {
	p, err := p.withDefaults()
	if err != nil {
		return nil, err
	}
	var b Bounds
	if !l.Sink { // a sink's output has no batch log of its own
		if b, err = ComputeBounds(l.Objects, p); err != nil {
			return nil, err
		}
	}
	pl := &planner{p: p, b: b, objs: make(map[string]gateway.Attrs, len(l.Objects)), dec: make(map[string]Decision, len(l.Objects)), listing: l}
	for _, o := range l.Objects {
		pl.objs[o.Key] = o
	}
	var sidecars []string
	for _, o := range l.Objects {
		if _, ok := sidecarOf(o.Key, pl.objs); ok {
			sidecars = append(sidecars, o.Key)
		}
	}
	if l.Sink {
		pl.compacted()
		pl.sinkOutput()
	} else {
		pl.logs()
		pl.state()
		pl.rocksdbFiles()
		pl.compacted()
		pl.ckgate()
	}
	// Sidecars follow their file.
	for _, k := range sidecars {
		main, _ := sidecarOf(k, pl.objs)
		if l.Sink && !strings.HasPrefix(k, checkpoint.SinkMetadataDir+"/") {
			pl.set(k, Keep, "sink output data: retention never removes data files")
			continue
		}
		if _, ok := pl.objs[main]; !ok {
			pl.set(k, Remove, "checksum sidecar of a file that is gone")
			continue
		}
		if d, ok := pl.dec[main]; ok && d.Action == Remove {
			pl.set(k, Remove, "checksum sidecar of "+main+" (removed)")
		} else {
			pl.set(k, Keep, "checksum sidecar of "+main+" (kept)")
		}
	}
	for _, o := range l.Objects {
		pl.set(o.Key, Keep, "not a retention candidate")
	}
	res := &RetentionResult{LatestOffsets: b.Latest, LatestCommit: b.Committed, RetainFrom: b.RetainFrom, Keep: []Decision{}, Remove: []Decision{}}
	for _, o := range l.Objects {
		d := pl.dec[o.Key]
		if d.Action == Remove {
			res.Remove = append(res.Remove, d)
			res.RemovedBytes += d.Size
		} else {
			res.Keep = append(res.Keep, d)
		}
	}
	slices.SortFunc(res.Keep, func(a, b Decision) int { return strings.Compare(a.Key, b.Key) })
	SortSafe(res.Remove)
	return res, nil
}

// sidecarOf reports whether key is a checksum sidecar and names its file:
// dir/.name.crc (Hadoop) or dir/name.crc when dir/name is listed (Spark 4.1).
func sidecarOf(key string, objs map[string]gateway.Attrs) (string, bool) {
	dir, base := path.Split(key)
	if !strings.HasSuffix(base, ".crc") {
		return "", false
	}
	if strings.HasPrefix(base, ".") {
		return dir + strings.TrimSuffix(strings.TrimPrefix(base, "."), ".crc"), true
	}
	main := dir + strings.TrimSuffix(base, ".crc")
	if _, ok := objs[main]; ok {
		return main, true
	}
	return "", false
}

// logs decides offsets/ and commits/.
func (pl *planner) logs() {
	if pl.b.RetainFrom == nil {
		return // no offsets or commits
	}
	retained := fmt.Sprintf("retained batch (>= %d)", *pl.b.RetainFrom)
	older := fmt.Sprintf("batch older than the retained ones (< %d)", *pl.b.RetainFrom)
	for _, o := range pl.listing.Objects {
		k := o.Key
		for _, dir := range []string{checkpoint.OffsetsDir, checkpoint.CommitsDir} {
			id, ok := logID(k, dir)
			if !ok {
				continue
			}
			switch {
			case pl.b.Latest != nil && id == *pl.b.Latest && (pl.b.Committed == nil || *pl.b.Committed < id):
				pl.set(k, Keep, "in-flight batch")
			case pl.b.Committed != nil && id == *pl.b.Committed:
				pl.set(k, Keep, "latest committed batch")
			case pl.b.Committed != nil && id > *pl.b.Committed:
				pl.set(k, Keep, "newer than the latest commit")
			case id >= *pl.b.RetainFrom:
				pl.set(k, Keep, retained)
			default:
				pl.set(k, Remove, older)
			}
		}
	}
}

// versionFile parses a state store version file key: its store
// directory (state/<op>/<part>/[<store>/]) and name.
func versionFile(k string) (string, checkpoint.StateFileName, bool) {
	rest, ok := strings.CutPrefix(k, checkpoint.StateDir+"/")
	if !ok {
		return "", checkpoint.StateFileName{}, false
	}
	dir, base := path.Split(rest)
	if strings.HasPrefix(base, ".") {
		return "", checkpoint.StateFileName{}, false
	}
	n, ok := checkpoint.ParseStateFileName(base)
	if !ok {
		return "", checkpoint.StateFileName{}, false
	}
	// Files under SSTs/, logs/ or _metadata are not versions.
	depth := strings.Count(dir, "/")
	if last := path.Base(dir); depth < 2 || depth > 3 || last == "SSTs" || last == "logs" {
		return "", checkpoint.StateFileName{}, false
	}
	return k[:len(k)-len(base)], n, true
}

// state decides state/<op>/<part>/[<store>/] files.
func (pl *planner) state() {
	// Two passes: count, then fill slices of the exact size (a 10k-batch
	// checkpoint has 10k files per directory).
	counts := map[string]int{}
	for _, o := range pl.listing.Objects {
		if full, _, ok := versionFile(o.Key); ok {
			counts[full]++
		}
	}
	dirs := make(map[string][]checkpoint.StateFile, len(counts))
	for _, o := range pl.listing.Objects {
		full, n, ok := versionFile(o.Key)
		if !ok {
			continue
		}
		if dirs[full] == nil {
			dirs[full] = make([]checkpoint.StateFile, 0, counts[full])
		}
		dirs[full] = append(dirs[full], checkpoint.StateFile{Key: o.Key, Name: n, Modified: o.Modified})
	}
	if pl.b.RetainFrom == nil {
		for _, fs := range dirs {
			for _, f := range fs {
				pl.set(f.Key, Keep, "state without offsets: kept")
			}
		}
		return
	}
	for dir, fs := range dirs {
		var plain, uid []checkpoint.StateFile
		for _, f := range fs {
			if f.Name.UniqueID == "" {
				plain = append(plain, f)
			} else {
				uid = append(uid, f)
			}
		}
		pl.statePlain(plain)
		pl.stateUID(dir, uid)
	}
}

// statePlain: the base of version R's chain (checkpoint.WalkStateChain:
// the newest snapshot at or below R) and everything after it.
func (pl *planner) statePlain(fs []checkpoint.StateFile) {
	if len(fs) == 0 {
		return
	}
	r := *pl.b.RetainFrom
	versions, pick := checkpoint.NewStatePicker(fs)
	base := int64(-1)
	if ch := checkpoint.WalkStateChain(r, versions, func(v int64, b bool) string { return pick(v, b, "") }); ch.From > 0 {
		base = ch.From
	}
	none := fmt.Sprintf("no snapshot at or below version %d: every version is needed", r)
	older := fmt.Sprintf("older than snapshot %d, which rebuilds the retained versions (>= %d)", base, r)
	newest := fmt.Sprintf("newest snapshot at or below version %d", r)
	after := fmt.Sprintf("version after snapshot %d", base)
	for _, f := range fs {
		switch {
		case base < 0:
			pl.set(f.Key, Keep, none)
		case f.Name.Version < base:
			pl.set(f.Key, Remove, older)
		case f.Name.Version == base && f.Name.IsBase():
			pl.set(f.Key, Keep, newest)
		default:
			pl.set(f.Key, Keep, after)
		}
	}
}

// stateUID: the files retained commits name and their rebuild chains.
func (pl *planner) stateUID(dir string, fs []checkpoint.StateFile) {
	if len(fs) == 0 {
		return
	}
	keepAll := func(why string) {
		for _, f := range fs {
			pl.set(f.Key, Keep, why)
		}
	}
	c := pl.b.Committed
	if c == nil {
		keepAll("unique-id state without a commit log: kept")
		return
	}
	// state/<op>/<part>/ is store 0 ("default"); other stores' positions
	// in the commit are not known from the path.
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(dir, checkpoint.StateDir+"/"), "/"), "/")
	if len(parts) != 2 {
		keepAll("unique-id state of a named store: kept (store index not known)")
		return
	}
	op, err1 := strconv.ParseInt(parts[0], 10, 64)
	part, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		keepAll("unique-id state outside the layout: kept")
		return
	}
	byUID := map[string][]checkpoint.StateFile{}
	for _, f := range fs {
		byUID[f.Name.UniqueID] = append(byUID[f.Name.UniqueID], f)
	}
	needed := map[string]string{}
	named := false
	for _, n := range pl.b.RetainedCommits() {
		cm := pl.listing.Commits[n]
		if cm == nil || cm.StateUniqueIDs == nil {
			keepAll(fmt.Sprintf("commits/%d not decoded or names no state: kept", n))
			return
		}
		ids, ok := cm.StateUniqueIDs[op]
		if !ok || part >= len(ids) || len(ids[part]) == 0 {
			continue // the batch did not name this partition
		}
		named = true
		tips := byUID[ids[part][0]]
		if n, ok := checkpoint.ParseStateFileName(ids[part][0]); ok && n.UniqueID != "" {
			// ckgate's engine names the tip file itself.
			tips = byUID[n.UniqueID]
		}
		if len(tips) == 0 {
			keepAll(fmt.Sprintf("commits/%d names a file that is not listed: kept", n))
			return
		}
		for _, t := range tips {
			if ch := pl.chain(t.Key, fmt.Sprintf("named by commits/%d", n), needed); ch.Problem != "" {
				keepAll(fmt.Sprintf("rebuild chain of %s not decoded or broken: kept", t.Key))
				return
			}
		}
	}
	if !named {
		keepAll("no retained commit names this partition: kept")
		return
	}
	for _, f := range fs {
		switch why, ok := needed[f.Key]; {
		case ok:
			pl.set(f.Key, Keep, why)
		case f.Name.Version > *c+1:
			pl.set(f.Key, Keep, fmt.Sprintf("newer than the latest commit (version > %d): possibly in flight", *c+1))
		default:
			pl.set(f.Key, Remove, "no retained commit needs it (superseded or failed attempt)")
		}
	}
}

// chain marks key and the files it is rebuilt from (checkpoint.
// LinkedStateChain over what ReadListing decoded, l.Deps) in needed, with
// why for key; a chain with a Problem (a link not decoded, a file
// missing) marks nothing.
func (pl *planner) chain(key, why string, needed map[string]string) checkpoint.StateChain {
	listed := func(k string) bool { _, ok := pl.objs[k]; return ok }
	links := func(k string) (checkpoint.StateLinks, string) {
		if n, ok := checkpoint.ParseStateFileName(path.Base(k)); ok && n.IsBase() {
			return checkpoint.StateLinks{Base: true}, ""
		}
		d, ok := pl.listing.Deps[k]
		if !ok {
			return checkpoint.StateLinks{}, k + ": rebuild links not decoded"
		}
		return checkpoint.StateLinks{Keys: d.Keys, Complete: d.Complete}, ""
	}
	known := func(k string) bool { _, ok := needed[k]; return ok }
	ch := checkpoint.LinkedStateChain(key, why, listed, links, known)
	if ch.Problem != "" {
		return ch
	}
	for i, k := range ch.Keys {
		if _, seen := needed[k]; seen {
			continue
		}
		if ch.By[i] == "" {
			needed[k] = why
		} else {
			needed[k] = "rebuilds " + ch.By[i]
		}
	}
	return ch
}

// rocksdbFiles decides the SSTs/ and logs/ files of RocksDB store
// directories: a file that a zip the plan keeps names is kept; one that no
// kept zip names goes when it is older than the oldest kept zip of its
// directory (a newer one may belong to a version being written: Spark
// uploads the files before the zip). When a kept zip could not be read,
// or the directory keeps no zip, every such file of the directory is kept.
func (pl *planner) rocksdbFiles() {
	type storeDir struct {
		files []string // SSTs/… and logs/… keys
		zips  []string // kept zips
	}
	dirs := map[string]*storeDir{}
	get := func(d string) *storeDir {
		if dirs[d] == nil {
			dirs[d] = &storeDir{}
		}
		return dirs[d]
	}
	for _, o := range pl.listing.Objects {
		k := o.Key
		if !strings.HasPrefix(k, checkpoint.StateDir+"/") {
			continue
		}
		dir, base := path.Split(k)
		if _, side := sidecarOf(k, pl.objs); side {
			continue // checksum sidecars follow their file
		}
		if sub := path.Base(dir); sub == "SSTs" || sub == "logs" {
			get(strings.TrimSuffix(dir, sub+"/")).files = append(get(strings.TrimSuffix(dir, sub+"/")).files, k)
			continue
		}
		if n, ok := checkpoint.ParseStateFileName(base); ok && n.Kind == checkpoint.KindZip {
			if d, ok := pl.dec[k]; ok && d.Action == Keep {
				get(dir).zips = append(get(dir).zips, k)
			}
		}
	}
	for dir, sd := range dirs {
		if len(sd.files) == 0 {
			continue
		}
		keepAll := func(why string) {
			for _, f := range sd.files {
				pl.set(f, Keep, why)
			}
		}
		if len(sd.zips) == 0 {
			keepAll("no kept snapshot (zip) in " + dir + " names its files: kept")
			continue
		}
		slices.SortFunc(sd.zips, func(a, b string) int { return cmp.Compare(zipVersion(a), zipVersion(b)) })
		used := map[string]string{}
		broken := ""
		var oldest time.Time
		for i, z := range sd.zips {
			if m := pl.objs[z].Modified; i == 0 || m.Before(oldest) {
				oldest = m
			}
			refs, ok := pl.listing.Zips[z]
			switch {
			case !ok:
				broken = fmt.Sprintf("kept snapshot %s was not read: every SST and log file of %s is kept", z, dir)
			case refs.Err != "":
				broken = fmt.Sprintf("kept snapshot %s could not be read (%s): every SST and log file of %s is kept", z, refs.Err, dir)
			}
			if broken != "" {
				break
			}
			for _, r := range refs.Keys {
				if _, seen := used[r]; !seen {
					used[r] = "named by kept snapshot " + z
				}
			}
		}
		if broken != "" {
			keepAll(broken)
			continue
		}
		for _, f := range sd.files {
			switch why, ok := used[f]; {
			case ok:
				pl.set(f, Keep, why)
			case pl.objs[f].Modified.Before(oldest):
				pl.set(f, Remove, "no kept snapshot of "+dir+" names it (used only by removed versions, or orphaned)")
			default:
				pl.set(f, Keep, "no kept snapshot names it, but it is not older than the oldest kept one: possibly uploaded for a version being written")
			}
		}
	}
}

// zipVersion is the version of a zip key (for ordering).
func zipVersion(key string) int64 {
	n, _ := checkpoint.ParseStateFileName(path.Base(key))
	return n.Version
}

// compacted decides compactible logs: sources/<i>/ and */_spark_metadata/
// (in a sink listing: _spark_metadata/ at its root). Like Spark's
// deleteExpiredLog, per log: E, the oldest entry kept, is the latest entry
// minus RetentionPolicy.MinBatches plus one (lowered to the oldest entry younger than
// RetentionPolicy.RetainFor); the newest compaction at or below E and every entry
// after it are kept (readers start at the latest compaction, and it is
// never removed, nor is the latest entry); earlier entries go. A log with
// no compaction at or below E is kept whole.
func (pl *planner) compacted() {
	dirs := map[string][]string{}
	for _, o := range pl.listing.Objects {
		k := o.Key
		dir, base := path.Split(k)
		var isSource, isSink bool
		if pl.listing.Sink {
			isSink = dir == checkpoint.SinkMetadataDir+"/"
		} else {
			isSource = strings.HasPrefix(dir, checkpoint.SourcesDir+"/") && strings.Count(dir, "/") == 2
			isSink = strings.HasSuffix(dir, checkpoint.SinkMetadataDir+"/")
		}
		if !isSource && !isSink {
			continue
		}
		if _, _, ok := checkpoint.ParseLogFileName(base); ok {
			dirs[dir] = append(dirs[dir], k)
		}
	}
	cutoff := pl.p.Now.Add(-pl.p.RetainFor)
	for dir, keys := range dirs {
		latest, lastCmp := int64(-1), int64(-1)
		young := int64(-1)
		for _, k := range keys {
			id, compact, _ := checkpoint.ParseLogFileName(path.Base(k))
			latest = max(latest, id)
			if compact {
				lastCmp = max(lastCmp, id)
			}
			if pl.p.RetainFor > 0 && pl.objs[k].Modified.After(cutoff) && (young < 0 || id < young) {
				young = id
			}
		}
		oldest := latest - int64(pl.p.MinBatches) + 1
		if young >= 0 {
			oldest = min(oldest, young)
		}
		base := int64(-1)
		for _, k := range keys {
			if id, compact, _ := checkpoint.ParseLogFileName(path.Base(k)); compact && id <= oldest && id > base {
				base = id
			}
		}
		for _, k := range keys {
			id, compact, _ := checkpoint.ParseLogFileName(path.Base(k))
			switch {
			case base < 0 && lastCmp < 0:
				pl.set(k, Keep, "log of "+dir+" never compacted: every entry is needed")
			case base < 0 && oldest < 0:
				pl.set(k, Keep, fmt.Sprintf("the log of %s holds fewer than %d entries (min batches): every entry is kept", dir, pl.p.MinBatches))
			case base < 0:
				pl.set(k, Keep, fmt.Sprintf("no compaction at or below entry %d (min batches, retain for): every entry of %s is kept", oldest, dir))
			case id < base:
				pl.set(k, Remove, fmt.Sprintf("folded into compaction %d", base))
			case id == base && compact && base == lastCmp:
				pl.set(k, Keep, "latest compaction")
			case id == base && compact:
				pl.set(k, Keep, fmt.Sprintf("newest compaction at or below entry %d (min batches, retain for)", oldest))
			case base == lastCmp:
				pl.set(k, Keep, fmt.Sprintf("after the latest compaction (%d)", base))
			default:
				pl.set(k, Keep, fmt.Sprintf("after compaction %d", base))
			}
		}
	}
}

// sinkOutput decides what compacted left of a sink listing: the output's
// data files and anything else are never retention's to remove.
func (pl *planner) sinkOutput() {
	for _, o := range pl.listing.Objects {
		if _, ok := sidecarOf(o.Key, pl.objs); ok {
			continue
		}
		if strings.HasPrefix(o.Key, checkpoint.SinkMetadataDir+"/") {
			pl.set(o.Key, Keep, "not a manifest log file")
			continue
		}
		pl.set(o.Key, Keep, "sink output data: retention never removes data files")
	}
}

// ckgate decides _ckgate/.
func (pl *planner) ckgate() {
	cutoff := pl.p.Now.Add(-pl.p.LogRetention)
	effects := checkpoint.CkgateDir + "/effects/"
	for _, o := range pl.listing.Objects {
		k := o.Key
		if !strings.HasPrefix(k, checkpoint.CkgateDir+"/") {
			continue
		}
		rest, ok := strings.CutPrefix(k, effects)
		if !ok {
			pl.set(k, Keep, "ckgate record")
			continue
		}
		bs, _, _ := strings.Cut(rest, "/")
		batch, err := strconv.ParseInt(bs, 10, 64)
		switch {
		case err != nil:
			pl.set(k, Keep, "effect ledger entry outside the layout")
		case pl.b.RetainFrom == nil || batch >= *pl.b.RetainFrom:
			pl.set(k, Keep, "effect ledger of a retained batch")
		case !o.Modified.Before(cutoff):
			pl.set(k, Keep, fmt.Sprintf("effect ledger younger than %s", pl.p.LogRetention))
		default:
			pl.set(k, Remove, fmt.Sprintf("effect ledger of batch %d, older than %s", batch, pl.p.LogRetention))
		}
	}
}

// SortSafe orders deletions so that a failure part-way never leaves a
// retained version without what it needs (every planned key is already
// unneeded) and leaves no orphan that a later plan cannot see: checksum
// sidecars before their files; state oldest version first; then RocksDB
// SST and log files (after the zips that name them: an SST a crash leaves
// behind is seen by the next plan, a zip naming a deleted SST is not
// left); then source and sink logs, commits and offsets, oldest batch
// first; then _ckgate/.
func SortSafe(ds []Decision) {
	type item struct {
		d       Decision
		rank    int
		version int64
		sidecar bool
	}
	items := make([]item, len(ds))
	for i, d := range ds {
		r, v := sortRank(d.Key)
		items[i] = item{d, r, v, strings.HasSuffix(d.Key, ".crc")}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		if c := cmp.Compare(a.version, b.version); c != 0 {
			return c
		}
		if a.sidecar != b.sidecar {
			if a.sidecar {
				return -1
			}
			return 1
		}
		return strings.Compare(a.d.Key, b.d.Key)
	})
	for i := range items {
		ds[i] = items[i].d
	}
}

func sortRank(key string) (int, int64) {
	dir, base := path.Split(key)
	base = strings.TrimSuffix(strings.TrimPrefix(base, "."), ".crc")
	switch {
	case strings.HasPrefix(key, checkpoint.StateDir+"/"):
		if sub := path.Base(dir); sub == "SSTs" || sub == "logs" {
			return 1, 0 // after the zips that name them
		}
		if n, ok := checkpoint.ParseStateFileName(base); ok {
			return 0, n.Version
		}
		return 0, 0
	case strings.HasPrefix(key, checkpoint.SourcesDir+"/"), strings.HasSuffix(dir, checkpoint.SinkMetadataDir+"/"):
		id, _, _ := checkpoint.ParseLogFileName(base)
		return 2, id
	case strings.HasPrefix(key, checkpoint.CommitsDir+"/"), strings.HasPrefix(key, checkpoint.OffsetsDir+"/"):
		id, _, _ := checkpoint.ParseLogFileName(base)
		return 3, id
	}
	return 4, 0
}
