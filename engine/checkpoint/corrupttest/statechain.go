package corrupttest

import (
	"fmt"
	"path"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// stateChain returns a change file (delta or changelog) and a base file
// (snapshot or zip) of state/0/0/ that a restart reads to rebuild version
// required, by the state chain rules (checkpoint.WalkStateChain,
// LinkedStateChain, LineageStateChain) as inspect applies them: the tip
// commits/C names and the bases its files' headers name (ckgate); the
// file of the unique id commits/C names and the lineage its changelog
// records (checkpoint v2); otherwise, as Spark's HDFS and RocksDB
// providers load, the latest base at or below required and a change file
// for every later version. The change file is the chain's last, the base
// its first; either is "" when the chain has none, both when required
// cannot be rebuilt (then no file is one a restart needs). codec is the
// state compression codec ("" = lz4).
func stateChain(f Files, required, C int64, codec string) (change, base string) {
	dir := checkpoint.StoreDirKey("0", 0, checkpoint.DefaultStore)
	var files []checkpoint.StateFile
	for k := range f {
		name, ok := strings.CutPrefix(k, dir+"/")
		if !ok || strings.Contains(name, "/") {
			continue
		}
		if n, ok := checkpoint.ParseStateFileName(name); ok {
			files = append(files, checkpoint.StateFile{Key: k, Name: n})
		}
	}
	versions, pick := checkpoint.NewStatePicker(files)
	var ch checkpoint.StateChain
	uid, named := committedID(f, C)
	switch _, tip := checkpoint.ParseStateFileName(uid); {
	case named && uid == "":
		return "", "" // the commit says: the empty state
	case !named:
		ch = checkpoint.WalkStateChain(required, versions, func(v int64, b bool) string { return pick(v, b, "") })
	case tip:
		ch = tipChain(f, dir, uid, C)
	default:
		ch = uniqueIDChain(f, required, uid, codec, pick)
	}
	if ch.Problem != "" {
		return "", ""
	}
	for _, k := range ch.Keys {
		n, _ := checkpoint.ParseStateFileName(path.Base(k))
		switch {
		case !n.IsBase():
			change = k
		case base == "":
			base = k
		}
	}
	return change, base
}

// committedID returns what commits/C names for partition 0 of the first
// store of operator 0 (a tip file name, a unique id, "" for the empty
// state); named is false when commits/C names none (or does not decode).
func committedID(f Files, C int64) (uid string, named bool) {
	if C < 0 {
		return "", false
	}
	cm, err := checkpoint.DecodeCommit(f[checkpoint.CommitKey(C)])
	if err != nil {
		return "", false
	}
	ids, ok := cm.StateUniqueIDs[0]
	if !ok || len(ids) == 0 {
		return "", false
	}
	if len(ids[0]) == 0 {
		return "", true
	}
	return ids[0][0], true
}

// tipChain follows ckgate's tip back through the bases its files'
// headers name.
func tipChain(f Files, dir, tip string, C int64) checkpoint.StateChain {
	listed := func(k string) bool { return f[k] != nil }
	links := func(k string) (checkpoint.StateLinks, string) {
		h, _, err := checkpoint.DecodeCkgateState(f[k])
		switch {
		case err != nil:
			return checkpoint.StateLinks{}, fmt.Sprintf("%s cannot be read: %v", k, err)
		case h.Snapshot:
			return checkpoint.StateLinks{Base: true}, ""
		case h.Base == "":
			return checkpoint.StateLinks{}, ""
		}
		return checkpoint.StateLinks{Keys: []string{dir + "/" + h.Base}}, ""
	}
	return checkpoint.LinkedStateChain(dir+"/"+tip, fmt.Sprintf("commits/%d", C), listed, links, nil)
}

// uniqueIDChain rebuilds version required from the file of unique id uid:
// its base, or its changelog and the lineage that records. A change file
// without a lineage is read whatever it is built on: the chain is that
// file alone.
func uniqueIDChain(f Files, required int64, uid, codec string, pick checkpoint.StatePicker) checkpoint.StateChain {
	if b := pick(required, true, uid); b != "" {
		return checkpoint.StateChain{From: required, Keys: []string{b}}
	}
	tip := pick(required, false, uid)
	if tip == "" {
		return checkpoint.StateChain{Problem: fmt.Sprintf("version %d with unique id %s is missing", required, uid)}
	}
	if cl, err := checkpoint.DecodeChangelog(codec, f[tip], 0); err == nil && cl.Lineage != nil {
		return checkpoint.LineageStateChain(tip, required, cl.Lineage, pick)
	}
	return checkpoint.StateChain{Keys: []string{tip}}
}

// stateCodec is the state compression codec the offsets of batch L pin
// ("" = lz4).
func stateCodec(f Files, L int64) string {
	if seq, err := checkpoint.DecodeOffsetSeq(f[checkpoint.OffsetsKey(L)]); err == nil && seq.Metadata != nil {
		return seq.Metadata.Conf[checkpoint.ConfCompressionCodec]
	}
	return ""
}
