package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// ReadListing lists the checkpoint st holds at its root and decodes what RetentionPlan needs:
// the commits of the batches whose state is kept (R-1 … C) and, for the
// unique-id state files those commits name, their rebuild chains (ckgate
// state headers, checkpoint-v2 changelog lineage). What cannot be read or
// decoded is left out, and RetentionPlan then keeps the files it concerns.
func ReadListing(ctx context.Context, st gateway.Store, p RetentionPolicy) (Listing, error) {
	var l Listing
	for a, err := range st.List(ctx, "") {
		if err != nil {
			return l, fmt.Errorf("list: %w", err)
		}
		l.Objects = append(l.Objects, a)
	}
	if err := readDeps(ctx, st, p, &l); err != nil {
		return l, err
	}
	return l, readZips(ctx, st, p, &l)
}

// ReadSinkListing lists the manifest log (_spark_metadata/) of the file sink
// output directory st holds at its root, for Plan. The data files are not
// listed: retention never removes them. An output without a manifest log
// is checkpoint.ErrNotCheckpoint.
func ReadSinkListing(ctx context.Context, st gateway.Store) (Listing, error) {
	l := Listing{Sink: true}
	for a, err := range st.List(ctx, checkpoint.SinkMetadataDir+"/") {
		if errors.Is(err, gateway.ErrNotFound) {
			break
		}
		if err != nil {
			return l, fmt.Errorf("list %s/: %w", checkpoint.SinkMetadataDir, err)
		}
		l.Objects = append(l.Objects, a)
	}
	if !slices.ContainsFunc(l.Objects, func(a gateway.Attrs) bool {
		_, _, ok := checkpoint.ParseLogFileName(path.Base(a.Key))
		return ok
	}) {
		return l, fmt.Errorf("%w: no file sink manifest log (%s/)", checkpoint.ErrNotCheckpoint, checkpoint.SinkMetadataDir)
	}
	return l, nil
}

// readDeps fills l.Commits and l.Deps.
func readDeps(ctx context.Context, st gateway.Store, p RetentionPolicy, l *Listing) error {
	b, err := ComputeBounds(l.Objects, p)
	if err != nil {
		return err
	}
	if b.Committed == nil || b.RetainFrom == nil {
		return nil
	}
	objs := make(map[string]bool, len(l.Objects))
	byDirUID := map[string][]string{}            // dir + uid → keys
	byDir := map[string][]checkpoint.StateFile{} // dir → its unique-id state files
	hasUID := false
	for _, o := range l.Objects {
		objs[o.Key] = true
		if !strings.HasPrefix(o.Key, checkpoint.StateDir+"/") {
			continue
		}
		dir, base := path.Split(o.Key)
		if n, ok := checkpoint.ParseStateFileName(base); ok && n.UniqueID != "" && !strings.HasPrefix(base, ".") {
			byDirUID[dir+n.UniqueID] = append(byDirUID[dir+n.UniqueID], o.Key)
			byDir[dir] = append(byDir[dir], checkpoint.StateFile{Key: o.Key, Name: n, Modified: o.Modified})
			hasUID = true
		}
	}
	if !hasUID {
		return nil // plain state: names alone decide
	}
	l.Commits = map[int64]*checkpoint.CommitMetadata{}
	l.Deps = map[string]Deps{}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, readConcurrency)
	)
	// The retained commits, read in parallel; one that does not read or
	// decode is left out (RetentionPlan then keeps the state it would name).
	for _, n := range b.RetainedCommits() {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if cm, err := checkpoint.ReadCommit(ctx, st, n); err == nil {
				mu.Lock()
				l.Commits[n] = cm
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	// The tips they name, by store directory: each directory's chains are
	// walked by one goroutine, directories in parallel.
	tips := map[string][]string{}
	for _, cm := range l.Commits {
		for op, parts := range cm.StateUniqueIDs {
			for part, stores := range parts {
				if len(stores) == 0 {
					continue
				}
				dir := checkpoint.StateDir + "/" + strconv.FormatInt(op, 10) + "/" + strconv.Itoa(part) + "/"
				uid := stores[0]
				if n, ok := checkpoint.ParseStateFileName(uid); ok && n.UniqueID != "" {
					uid = n.UniqueID // ckgate's engine names the tip file itself
				}
				tips[dir] = append(tips[dir], byDirUID[dir+uid]...)
			}
		}
	}
	for dir, keys := range tips {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			deps := map[string]Deps{}
			_, pick := checkpoint.NewStatePicker(byDir[dir])
			for _, k := range keys {
				if readChain(ctx, st, k, objs, pick, deps) != nil && ctx.Err() != nil {
					return
				}
			}
			mu.Lock()
			maps.Copy(l.Deps, deps)
			mu.Unlock()
		})
	}
	wg.Wait()
	return ctx.Err()
}

// readConcurrency bounds ReadListing's parallel requests.
const readConcurrency = 16

// readChain decodes key's rebuild links into deps (and its bases', for
// ckgate state) until a snapshot, the empty state or a known file.
func readChain(ctx context.Context, st gateway.Store, key string, objs map[string]bool, pick checkpoint.StatePicker, deps map[string]Deps) error {
	for range 1 << 20 {
		if _, done := deps[key]; done {
			return nil
		}
		dir, base := path.Split(key)
		n, ok := checkpoint.ParseStateFileName(base)
		if !ok || n.IsBase() {
			return nil
		}
		// Only a prefix: a ckgate state file names its base in its
		// header, so a file of any size costs a few KiB here.
		rc, _, err := st.GetStream(ctx, key)
		if err != nil {
			return err
		}
		head, err := io.ReadAll(io.LimitReader(rc, checkpoint.CkgateStateHeaderMax))
		if err != nil {
			rc.Close()
			return err
		}
		if checkpoint.IsCkgateState(head) {
			rc.Close()
			h, err := checkpoint.DecodeCkgateStateHeader(head)
			if err != nil {
				return err
			}
			if h.Base == "" {
				deps[key] = Deps{}
				return nil
			}
			next := dir + h.Base
			deps[key] = Deps{Keys: []string{next}}
			if !objs[next] {
				return nil
			}
			key = next
			continue
		}
		if n.Kind != checkpoint.KindChangelog {
			rc.Close()
			return nil
		}
		rest, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		cl, err := checkpoint.DecodeChangelog("", append(head, rest...), 0)
		if err != nil {
			return err
		}
		if len(cl.Lineage) == 0 {
			return errors.New(key + ": no lineage")
		}
		// The state chain's lineage rule (Spark's RocksDB v2 load): the
		// newest zip of the lineage, then the changelogs after it.
		ch := checkpoint.LineageStateChain(key, n.Version, cl.Lineage, pick)
		if ch.Problem != "" {
			return errors.New(ch.Problem)
		}
		deps[key] = Deps{Keys: ch.Keys[:len(ch.Keys)-1], Complete: true}
		return nil
	}
	return errors.New(key + ": chain too long")
}

// readZips fills l.Zips for the zips a plan of l keeps in RocksDB store
// directories that hold SSTs/ or logs/ files. A zip that does not read or
// decode gets its error (RetentionPlan then keeps its directory's files).
func readZips(ctx context.Context, st gateway.Store, p RetentionPolicy, l *Listing) error {
	withFiles := map[string]bool{}
	for _, o := range l.Objects {
		if !strings.HasPrefix(o.Key, checkpoint.StateDir+"/") {
			continue
		}
		dir := path.Dir(o.Key)
		if sub := path.Base(dir); sub == "SSTs" || sub == "logs" {
			withFiles[path.Dir(dir)+"/"] = true
		}
	}
	if len(withFiles) == 0 {
		return nil
	}
	r, err := RetentionPlan(*l, p)
	if err != nil {
		return err
	}
	var zips []string
	for _, d := range r.Keep {
		dir, base := path.Split(d.Key)
		if n, ok := checkpoint.ParseStateFileName(base); ok && n.Kind == checkpoint.KindZip && !strings.HasPrefix(base, ".") && withFiles[dir] {
			zips = append(zips, d.Key)
		}
	}
	l.Zips = make(map[string]ZipRefs, len(zips))
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, readConcurrency)
	)
	for _, z := range zips {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var refs ZipRefs
			data, _, err := st.Get(ctx, z)
			if err == nil {
				refs.Keys, err = DecodeZipRefs(z, data)
			}
			if err != nil {
				refs = ZipRefs{Err: err.Error()}
			}
			mu.Lock()
			l.Zips[z] = refs
			mu.Unlock()
		})
	}
	wg.Wait()
	return ctx.Err()
}

// DecodeZipRefs decodes the RocksDB zip stored at key and returns the keys
// (in key's directory: SSTs/<name>, logs/<name>) of the SST and log files
// its metadata names. A zip that does not decode, or names a file outside
// those directories, is an error naming key.
func DecodeZipRefs(key string, data []byte) ([]string, error) {
	snap, err := checkpoint.DecodeRocksDBZip(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	dir := path.Dir(key) + "/"
	var keys []string
	add := func(sub string, f checkpoint.RocksDBFile) error {
		name := f.DFSName()
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
			return fmt.Errorf("%s: %w: metadata names the file %q (local %q)", key, checkpoint.ErrCorrupt, name, f.LocalFileName)
		}
		keys = append(keys, dir+sub+"/"+name)
		return nil
	}
	for _, f := range snap.Metadata.SSTFiles {
		if err := add("SSTs", f); err != nil {
			return nil, err
		}
	}
	for _, f := range snap.Metadata.LogFiles {
		if err := add("logs", f); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
