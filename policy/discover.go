package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/ckgate/ckgate/gateway"
	"golang.org/x/sync/errgroup"
)

// Checkpoint is a checkpoint found by Discover.
type Checkpoint struct {
	URL    string `json:"url"`    // its location: the target URL joined with its root
	Bucket string `json:"bucket"` // bucket or container; "" for a local directory
	Path   string `json:"path"`   // its root within the bucket ("" at the bucket root)
	Root   string `json:"root"`   // its root as a key of the audited store ("" for the store itself)
	// QueryID is the id in its metadata; WriterQueryID the one in ckgate's
	// writer record, when there is one.
	QueryID       string `json:"query_id"`
	WriterQueryID string `json:"writer_query_id,omitempty"`
	// Entries are the names directly under the root ("offsets/", "metadata").
	Entries    []string    `json:"entries"`
	DeltaTable *DeltaTable `json:"delta_table,omitempty"`
	// DeltaSources are the table ids its Delta sources read (filled by
	// Audit with AuditOptions.DeltaSources).
	DeltaSources []string `json:"delta_sources,omitempty"`
	// Sink is the file sink its ckgate plan names (absent for other sinks
	// and for Spark's checkpoints, which record none).
	Sink *SinkOwnership `json:"sink,omitempty"`
	// Error says why its metadata could not be read.
	Error string `json:"error,omitempty"`
}

// SinkOwnership is a checkpoint's file sink and the owner its owner log
// names (AuditOptions.SinkOwner; empty when it has no owner record or was
// not read).
type SinkOwnership struct {
	URL             string `json:"url"`
	OwnerQueryID    string `json:"owner_query_id,omitempty"`
	OwnerCheckpoint string `json:"owner_checkpoint,omitempty"`
	Error           string `json:"error,omitempty"`
}

// DeltaTable is a Delta table directory around a checkpoint.
type DeltaTable struct {
	URL string `json:"url"`
	Rel string `json:"rel"` // the checkpoint's root relative to the table
}

// Target is one audited location: a store and where it is.
type Target struct {
	URL   string // the store's URL, as the user named it (redacted for display)
	Store gateway.Store
}

// Location splits a store URL into its bucket (or Azure container) and the
// path inside it: s3://b/p → (b, p); gs://b/p → (b, p); az://acct/c/p →
// (c, p). A local path or file:// URL is audited as a bucket of its own:
// ("", "").
func Location(raw string) (bucket, path string, err error) {
	u, err := gateway.ParseURL(raw)
	if err != nil {
		return "", "", err
	}
	p := strings.Trim(u.Path, "/")
	switch u.Scheme {
	case "file":
		return "", "", nil
	case "az", "azure":
		c, rest, _ := strings.Cut(p, "/")
		return c, rest, nil
	}
	return u.Host, p, nil
}

// displayURL is raw without secrets and without a trailing '/'.
func displayURL(raw string) string {
	u, err := gateway.ParseURL(raw)
	if err != nil {
		return gateway.Redact(raw)
	}
	u.RawQuery = ""
	u.User = nil
	u.Fragment = ""
	s := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}).String()
	if u.Scheme == "file" && u.Host == "" {
		s = "file://" + strings.TrimSuffix(u.Path, "/")
	}
	return s
}

// maxEntries bounds the names kept per directory while listing.
const maxEntries = 64

// Discover lists t's store and returns every checkpoint in it: a `metadata`
// object with an `offsets/` directory beside it (Spark's layout and
// ckgate's). It reads each one's metadata (query id) and ckgate writer
// record, notes the Delta table (a directory with `_delta_log/`) around it,
// and sorts them by URL. A checkpoint whose metadata cannot be read is kept
// with Error set; a listing error is returned.
func Discover(ctx context.Context, t Target) ([]Checkpoint, error) {
	bucket, base, err := Location(t.URL)
	if err != nil {
		return nil, err
	}
	disp := displayURL(t.URL)
	hasMeta := map[string]bool{}    // dirs holding a metadata object
	hasOffsets := map[string]bool{} // dirs holding an offsets/ directory
	hasWriter := map[string]bool{}  // dirs holding _ckgate/writer
	hasPlan := map[string]bool{}    // dirs holding _ckgate/plan.json
	tables := map[string]bool{}     // dirs holding _delta_log/
	children := map[string]map[string]bool{}
	for a, err := range t.Store.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("audit %s: list: %w", gateway.Redact(t.URL), err)
		}
		segs := strings.Split(a.Key, "/")
		for i := range segs {
			dir := strings.Join(segs[:i], "/")
			name := segs[i]
			last := i == len(segs)-1
			if !last {
				name += "/"
			}
			kids := children[dir]
			if kids == nil {
				kids = map[string]bool{}
				children[dir] = kids
			}
			if len(kids) < maxEntries {
				kids[name] = true
			}
			switch {
			case last && segs[i] == "metadata":
				hasMeta[dir] = true
			case !last && segs[i] == "offsets":
				hasOffsets[dir] = true
			case !last && segs[i] == "_delta_log":
				tables[dir] = true
			case i == len(segs)-2 && segs[i] == "_ckgate" && segs[i+1] == "writer":
				hasWriter[dir] = true
			case i == len(segs)-2 && segs[i] == "_ckgate" && segs[i+1] == "plan.json":
				hasPlan[dir] = true
			}
		}
	}
	var out []Checkpoint
	for dir := range hasMeta {
		if !hasOffsets[dir] {
			continue
		}
		cp := Checkpoint{
			URL:    JoinPath(disp, dir),
			Bucket: bucket,
			Path:   JoinPath(base, dir),
			Root:   dir,
		}
		for name := range children[dir] {
			cp.Entries = append(cp.Entries, name)
		}
		sort.Strings(cp.Entries)
		cp.DeltaTable = deltaTable(disp, dir, tables)
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	// Each checkpoint's records are read on their own, several at a time.
	// The error returned is the one reading them in URL order would meet:
	// after a store failure no later checkpoint starts reading, every
	// earlier one is still read.
	errs := make([]error, len(out))
	var firstFailed atomic.Int64
	firstFailed.Store(int64(len(out)))
	var g errgroup.Group
	g.SetLimit(discoverReads)
	for i := range out {
		g.Go(func() error {
			if firstFailed.Load() < int64(i) {
				return nil
			}
			cp := &out[i]
			if errs[i] = readIDs(ctx, t.Store, cp, hasWriter[cp.Root]); errs[i] == nil && hasPlan[cp.Root] {
				errs[i] = readPlannedSink(ctx, t.Store, cp)
			}
			for errs[i] != nil {
				f := firstFailed.Load()
				if f <= int64(i) || firstFailed.CompareAndSwap(f, int64(i)) {
					break
				}
			}
			return nil // errs is looked at below
		})
	}
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// discoverReads bounds the checkpoints whose metadata Discover reads at a
// time: each read waits on the store most of the time.
const discoverReads = 16

// readIDs reads the query ids of cp's metadata and writer record. A store
// failure (unavailable, permission) is returned: the audit cannot go on;
// unreadable content is recorded in cp.Error.
func readIDs(ctx context.Context, s gateway.Store, cp *Checkpoint, writer bool) error {
	key := JoinPath(cp.Root, "metadata")
	data, _, err := gateway.GetBounded(ctx, s, key, 0)
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		cp.Error = key + " vanished while auditing"
	case err != nil:
		return fmt.Errorf("audit %s: %w", cp.URL, err)
	default:
		id, perr := gateway.ParseMetadataID(data)
		if perr != nil {
			cp.Error = perr.Error()
		} else if id == "" {
			cp.Error = "metadata holds an empty query id"
		}
		cp.QueryID = id
	}
	if !writer {
		return nil
	}
	wkey := JoinPath(cp.Root, gateway.WriterKey)
	data, _, err = gateway.GetBounded(ctx, s, wkey, 0)
	switch {
	case errors.Is(err, gateway.ErrNotFound):
	case err != nil:
		return fmt.Errorf("audit %s: %w", cp.URL, err)
	default:
		rec, perr := gateway.ParseWriterRecord(data)
		if perr == nil {
			cp.WriterQueryID = rec.QueryID
		}
	}
	return nil
}

// readPlannedSink notes the file sink cp's ckgate plan names. A store
// failure is returned; a plan that cannot be parsed is left to inspect.
func readPlannedSink(ctx context.Context, s gateway.Store, cp *Checkpoint) error {
	key := JoinPath(cp.Root, "_ckgate/plan.json")
	data, _, err := gateway.GetBounded(ctx, s, key, 0)
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("audit %s: %w", cp.URL, err)
	}
	var p struct {
		Sink map[string]string `json:"sink"`
	}
	if json.Unmarshal(data, &p) == nil && p.Sink["kind"] == "files" && p.Sink["path"] != "" {
		cp.Sink = &SinkOwnership{URL: p.Sink["path"]}
	}
	return nil
}

// deltaTable returns the innermost Delta table around dir, if any.
func deltaTable(disp, dir string, tables map[string]bool) *DeltaTable {
	best := ""
	found := false
	for t := range tables {
		inside := t == "" || strings.HasPrefix(dir, t+"/")
		if inside && t != dir && (!found || len(t) > len(best)) {
			best, found = t, true
		}
	}
	if !found {
		return nil
	}
	rel := dir
	if best != "" {
		rel = strings.TrimPrefix(dir, best+"/")
	}
	return &DeltaTable{URL: JoinPath(disp, best), Rel: rel}
}
