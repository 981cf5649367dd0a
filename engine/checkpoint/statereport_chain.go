package checkpoint

import (
	"fmt"
)

// chainResult is how the required version is rebuilt.
type chainResult struct {
	from    int64    // base version: a snapshot/zip, or 0 (the empty state)
	files   []*entry // the base file (if from > 0), then the change files in order
	problem string   // why it cannot be rebuilt ("" when it can)
}

// rebuildChain finds the files that rebuild the required version R with
// the state chain rules (statechain.go): with the unique id commits/C
// names (checkpoint v2, ckgate), the file of that id and, for a
// changelog, the lineage it records; otherwise, as Spark's HDFS and
// RocksDB providers load, the latest snapshot/zip ≤ R plus a
// delta/changelog for every later version up to R.
func (in *inspector) rebuildChain(j *partJob, versions []int64, decode func(*entry) *decodedFile) chainResult {
	p, R := j.part, in.required
	if R <= 0 {
		return chainResult{}
	}
	switch {
	case j.named && j.uid == "":
		return chainResult{} // the commit says: empty state
	case isTipName(j.uid):
		return in.tipChain(j, decode)
	}
	pick := partPicker(p)
	if j.uid == "" {
		return in.chainOf(WalkStateChain(R, versions, func(v int64, base bool) string { return pick(v, base, "") }))
	}
	if b := pick(R, true, j.uid); b != "" {
		return in.chainOf(StateChain{From: R, Keys: []string{b}})
	}
	f := pick(R, false, j.uid)
	if f == "" {
		return chainResult{problem: fmt.Sprintf("version %d with unique id %s (named by commits/%d) is missing", R, j.uid, in.C)}
	}
	fe := in.idx.byKey[f]
	d := decode(fe)
	if d.changelog != nil && d.changelog.Lineage != nil {
		return in.chainOf(LineageStateChain(f, R, d.changelog.Lineage, pick))
	}
	if d.err != nil {
		return chainResult{files: []*entry{fe}, problem: fmt.Sprintf("%s cannot be read: %v", f, d.err)}
	}
	// no lineage (an older changelog, a ckgate delta): walk by version,
	// with the unique ids the other commits name
	ch := WalkStateChain(R-1, versions, func(v int64, base bool) string {
		if u, ok := j.committed[v]; ok {
			return pick(v, base, u)
		}
		return pick(v, base, "")
	})
	ch.Keys = append(ch.Keys, f)
	return in.chainOf(ch)
}

// partPicker is a StatePicker over a partition's index (NewStatePicker's
// rule, without copying the index).
func partPicker(p *partIdx) StatePicker {
	return func(v int64, base bool, uid string) string {
		var best StateFile
		for _, e := range p.versions[v] {
			if e.file.IsBase() != base || (uid != "" && e.file.UniqueID != uid) {
				continue
			}
			if f := (StateFile{Key: e.Key, Name: e.file, Modified: e.Modified}); best.Key == "" || f.Newer(best) {
				best = f
			}
		}
		return best.Key
	}
}

// chainOf turns a StateChain of this checkpoint's keys into entries.
func (in *inspector) chainOf(ch StateChain) chainResult {
	out := chainResult{from: ch.From, problem: ch.Problem, files: make([]*entry, 0, len(ch.Keys))}
	for _, k := range ch.Keys {
		out.files = append(out.files, in.idx.byKey[k])
	}
	return out
}

// isTipName reports whether a stateUniqueIds entry is a file name (ckgate
// names each partition's newest file) rather than a bare unique id.
func isTipName(s string) bool {
	_, ok := ParseStateFileName(s)
	return ok
}

// tipChain follows a ckgate tip back through the bases its files' headers
// name, to a snapshot or to the empty state.
func (in *inspector) tipChain(j *partJob, decode func(*entry) *decodedFile) chainResult {
	p := j.part
	listed := func(key string) bool {
		e := in.idx.byKey[key]
		return e != nil && e.kind == entStateFile
	}
	links := func(key string) (StateLinks, string) {
		d := decode(in.idx.byKey[key])
		switch {
		case d.err != nil:
			return StateLinks{}, fmt.Sprintf("%s cannot be read: %v", key, d.err)
		case d.ckgate == nil:
			return StateLinks{}, fmt.Sprintf("%s is not a ckgate state file: its base is unknown", key)
		case d.ckgate.Snapshot:
			return StateLinks{Base: true}, ""
		case d.ckgate.Base == "":
			return StateLinks{}, ""
		}
		return StateLinks{Keys: []string{p.dir + "/" + d.ckgate.Base}}, ""
	}
	return in.chainOf(LinkedStateChain(p.dir+"/"+j.uid, fmt.Sprintf("commits/%d", in.C), listed, links, nil))
}

// rebuildKeys lists the keys of a chain and of the SST and log files its
// base zip names.
func rebuildKeys(p *partIdx, files []*entry, decoded map[*entry]*decodedFile) []string {
	keys := make([]string, 0, len(files))
	for _, e := range files {
		keys = append(keys, e.Key)
	}
	if len(files) > 0 {
		if d := decoded[files[0]]; d != nil && d.zip != nil {
			for _, f := range d.zip.Metadata.SSTFiles {
				keys = append(keys, p.dir+"/SSTs/"+f.DFSName())
			}
			for _, f := range d.zip.Metadata.LogFiles {
				keys = append(keys, p.dir+"/logs/"+f.DFSName())
			}
		}
	}
	return keys
}

// missingRocksDBFiles checks that the SST and log files a zip names exist
// with their recorded sizes.
func missingRocksDBFiles(p *partIdx, z *RocksDBSnapshot) string {
	check := func(dir string, fs []RocksDBFile) string {
		for _, f := range fs {
			a := p.aux[dir+"/"+f.DFSName()]
			switch {
			case a == nil:
				return fmt.Sprintf("%s/%s/%s, which the snapshot names, is missing", p.dir, dir, f.DFSName())
			case a.Size != f.SizeBytes:
				return fmt.Sprintf("%s has %d bytes, the snapshot records %d", a.Key, a.Size, f.SizeBytes)
			}
		}
		return ""
	}
	if s := check("SSTs", z.Metadata.SSTFiles); s != "" {
		return s
	}
	return check("logs", z.Metadata.LogFiles)
}
