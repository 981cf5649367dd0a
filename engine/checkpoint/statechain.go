package checkpoint

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"time"
)

// The state chain: which files rebuild one version of one state store
// directory (state/<op>/<part>[/<store>]). These functions are pure: the
// callers list and decode, the rules live here once. Inspect calls them to
// say whether the version a restart loads can be built, retention to keep
// every file some retained version is built from, so the two cannot
// disagree about what a restart needs.
//
// The rules, as Spark's providers and ckgate's engine load state:
//   - by version (HDFSBackedStateStoreProvider, RocksDB without unique
//     ids): the latest snapshot or zip at or below the version, then one
//     delta or changelog for every later version up to it (WalkStateChain);
//   - checkpoint format v2 (RocksDB with unique ids): a changelog records
//     its lineage, the unique ids of the versions before it; the latest
//     lineage entry with a zip is the base, the later entries' changelogs
//     follow (LineageStateChain);
//   - ckgate's engine: each state file names the file it is built on in
//     its header, back to a snapshot or the empty state; a complete link
//     set (a resolved lineage) ends the walk (LinkedStateChain).
//
// RocksDB's SST and log files are named by the zip's metadata; the caller
// adds them for the chain's base zip.

// StateFile is one listed state store file of a store directory.
type StateFile struct {
	Key      string
	Name     StateFileName
	Modified time.Time
}

// Newer reports whether f wins over g, a file of the same version and
// kind (attempts that wrote one version): the later modified, then the
// greater key, as a listing-ordered load would take it.
func (f StateFile) Newer(g StateFile) bool {
	return f.Modified.After(g.Modified) || (f.Modified.Equal(g.Modified) && f.Key > g.Key)
}

// StateChain is how one version is rebuilt.
type StateChain struct {
	// From is the base version: a snapshot or zip, or 0 (the empty state).
	From int64
	// Keys are the base file (when From > 0), then the change files in the
	// order they are applied.
	Keys []string
	// By names, for each key, the key whose link named it ("" for the
	// first one walked: the tip, or the version asked for). Only
	// LinkedStateChain fills it.
	By []string
	// Problem says why the version cannot be rebuilt ("" when it can);
	// Keys then hold what was found before the gap.
	Problem string
}

// StatePicker returns the key of the file of version v of one store
// directory, a base (snapshot, zip) when base is set and a change file
// (delta, changelog) otherwise, with unique id uid ("" any); "" when
// there is none.
type StatePicker func(v int64, base bool, uid string) string

// NewStatePicker indexes the files of one store directory (sorting files
// in place: the picker keeps them) and returns
// their versions (ascending) and a picker over them. Of several files of
// one version and kind, the Newer wins.
func NewStatePicker(files []StateFile) ([]int64, StatePicker) {
	fs := files
	slices.SortFunc(fs, func(a, b StateFile) int { return cmp.Compare(a.Name.Version, b.Name.Version) })
	versions := make([]int64, 0, len(fs))
	for i, f := range fs {
		if i == 0 || f.Name.Version != fs[i-1].Name.Version {
			versions = append(versions, f.Name.Version)
		}
	}
	return versions, func(v int64, base bool, uid string) string {
		i, _ := slices.BinarySearchFunc(fs, v, func(f StateFile, v int64) int { return cmp.Compare(f.Name.Version, v) })
		var best *StateFile
		for ; i < len(fs) && fs[i].Name.Version == v; i++ {
			f := &fs[i]
			if f.Name.IsBase() != base || (uid != "" && f.Name.UniqueID != uid) {
				continue
			}
			if best == nil || f.Newer(*best) {
				best = f
			}
		}
		if best == nil {
			return ""
		}
		return best.Key
	}
}

// WalkStateChain rebuilds version v by version: the latest base at or
// below v among versions (ascending), then a change file for every later
// version up to v. pick is a StatePicker with the unique id chosen by the
// caller ("" for plain files).
func WalkStateChain(v int64, versions []int64, pick func(v int64, base bool) string) StateChain {
	var ch StateChain
	if v <= 0 {
		return ch
	}
	i, _ := slices.BinarySearch(versions, v+1)
	for i--; i >= 0; i-- {
		if b := pick(versions[i], true); b != "" {
			ch.From, ch.Keys = versions[i], []string{b}
			break
		}
	}
	for n := ch.From + 1; n <= v; n++ {
		c := pick(n, false)
		if c == "" {
			from := "the empty state (no snapshot)"
			if ch.From > 0 {
				from = fmt.Sprintf("snapshot %d", ch.From)
			}
			ch.Problem = fmt.Sprintf("version %d has no delta/changelog file (rebuilding %d from %s)", n, v, from)
			return ch
		}
		ch.Keys = append(ch.Keys, c)
	}
	return ch
}

// LineageStateChain rebuilds version v, whose changelog tip records
// lineage: the latest lineage entry with a zip is the base, the changelogs
// of the later versions (by the unique ids of the lineage) follow, then
// tip.
func LineageStateChain(tip string, v int64, lineage []LineageEntry, pick StatePicker) StateChain {
	uids := map[int64]string{}
	for _, l := range lineage {
		uids[l.Version] = l.CheckpointUniqueID
	}
	var ch StateChain
	for i := len(lineage) - 1; i >= 0; i-- {
		if lineage[i].Version >= v {
			continue // not an earlier version: a hostile lineage
		}
		if b := pick(lineage[i].Version, true, lineage[i].CheckpointUniqueID); b != "" {
			ch.From, ch.Keys = lineage[i].Version, []string{b}
			break
		}
	}
	for n := ch.From + 1; n < v; n++ {
		u, ok := uids[n]
		if !ok {
			ch.Problem = fmt.Sprintf("the lineage of %s has no version %d", tip, n)
			return ch
		}
		c := pick(n, false, u)
		if c == "" {
			ch.Problem = fmt.Sprintf("version %d with unique id %s (from the lineage of %s) is missing", n, u, tip)
			return ch
		}
		ch.Keys = append(ch.Keys, c)
	}
	ch.Keys = append(ch.Keys, tip)
	return ch
}

// StateLinks are what decoding one state file says it is rebuilt from.
type StateLinks struct {
	// Base: the file is a full copy of the state (a snapshot, a zip).
	Base bool
	// Keys: the file it is built on (Keys[0]; none: the empty state) or,
	// with Complete, the whole set it is rebuilt from, base first (a
	// resolved lineage: LineageStateChain's keys but the tip).
	Keys     []string
	Complete bool
}

// maxLinks bounds a walk of links (a longer one is a loop the seen set
// missed, or a hostile listing).
const maxLinks = 1 << 20

// LinkedStateChain follows tip (named by namedBy, for messages) back
// through the links each file records, to a base, the empty state or a
// complete link set. listed reports whether a key is a listed state
// file; links returns a file's links, or a problem ("… cannot be read")
// when they are not known; known, when set, ends the walk at a key that
// is already part of another chain (the rest of the walk is that chain's).
func LinkedStateChain(tip, namedBy string, listed func(key string) bool, links func(key string) (StateLinks, string), known func(key string) bool) StateChain {
	var rev, by []string
	out := func(ch StateChain) StateChain {
		ch.Keys, ch.By = make([]string, len(rev)), make([]string, len(by))
		for i := range rev {
			ch.Keys[len(rev)-1-i], ch.By[len(by)-1-i] = rev[i], by[i]
		}
		return ch
	}
	seen := map[string]bool{}
	for key, from := tip, ""; ; {
		if len(rev) > maxLinks {
			return out(StateChain{Problem: fmt.Sprintf("%s: the chain of bases is longer than %d files", tip, maxLinks)})
		}
		if known != nil && known(key) {
			return out(StateChain{})
		}
		if !listed(key) {
			name := namedBy
			if from != "" {
				name = from
			}
			return out(StateChain{Problem: fmt.Sprintf("%s, named by %s, is missing", key, name)})
		}
		if seen[key] {
			return out(StateChain{Problem: fmt.Sprintf("%s: the chain of bases loops", key)})
		}
		seen[key] = true
		rev, by = append(rev, key), append(by, from)
		l, problem := links(key)
		switch {
		case problem != "":
			return out(StateChain{Problem: problem})
		case l.Base:
			n, _ := ParseStateFileName(path.Base(key))
			return out(StateChain{From: n.Version})
		case l.Complete:
			for _, k := range l.Keys {
				if !listed(k) {
					return out(StateChain{Problem: fmt.Sprintf("%s, named by %s, is missing", k, key)})
				}
			}
			ch := out(StateChain{})
			if len(l.Keys) > 0 {
				n, _ := ParseStateFileName(path.Base(l.Keys[0]))
				if n.IsBase() {
					ch.From = n.Version
				}
			}
			ks := slices.Clone(l.Keys)
			bys := make([]string, len(ks))
			for i := range bys {
				bys[i] = key
			}
			ch.Keys, ch.By = append(ks, ch.Keys...), append(bys, ch.By...)
			return ch
		case len(l.Keys) == 0:
			return out(StateChain{}) // built on the empty state
		}
		key, from = l.Keys[0], key
	}
}
