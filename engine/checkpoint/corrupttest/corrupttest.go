// Package corrupttest derives corrupt checkpoints from a clean one: the
// corpus the reliability tests run `inspect` and `run` against (files cut
// short, empty files, version headers from the future, a missing metadata
// file over existing offsets, commits ahead of offsets, leftover temp
// files, broken state files and a broken ckgate plan).
//
// A checkpoint is a Files map (key → bytes); Cases looks at what a clean
// one holds (its latest offsets and commit, the state files a restart
// reads, the source log, ckgate's plan and writer record) and returns the
// cases that apply to it, each naming the key at fault, the finding ids
// inspect may report for it, and whether a restart must be refused.
package corrupttest

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// Files is a checkpoint: key → bytes.
type Files map[string][]byte

// Clone returns a deep copy.
func (f Files) Clone() Files {
	out := make(Files, len(f))
	for k, v := range f {
		out[k] = bytes.Clone(v)
	}
	return out
}

// Case is one corruption of a clean checkpoint.
type Case struct {
	Name string
	// Key is the key at fault: inspect reports a finding about it, and a
	// refused run names it in its error.
	Key string
	// Findings are the ids inspect may report about Key (one of them must
	// be there).
	Findings []string
	// Fatal: inspect reports an error finding and a restart must be
	// refused before anything is written. Otherwise inspect warns and a
	// restart goes on.
	Fatal bool
	// Apply turns the clean checkpoint into the corrupt one.
	Apply func(Files)
}

// A uuid as Spark and filestore put in temp file names.
const tmpUUID = "0b9c3f2e-5d8a-4c1b-9e7f-6a2d1c0b9e8f"

// Cases returns the corrupt variants of clean that apply to it.
func Cases(clean Files) []Case {
	offs, coms := ids(clean, checkpoint.OffsetsDir), ids(clean, checkpoint.CommitsDir)
	if len(offs) == 0 {
		return nil
	}
	L := offs[len(offs)-1]
	C := int64(-1)
	if len(coms) > 0 {
		C = coms[len(coms)-1]
	}
	var cs []Case
	add := func(name, key string, fatal bool, apply func(Files), findings ...string) {
		cs = append(cs, Case{Name: name, Key: key, Findings: findings, Fatal: fatal, Apply: apply})
	}
	truncated := []string{checkpoint.FindingTruncated, checkpoint.FindingCorrupt}

	// the log entries a restart reads
	logs := []string{checkpoint.OffsetsKey(L)}
	if L > 0 && clean[checkpoint.OffsetsKey(L-1)] != nil {
		logs = append(logs, checkpoint.OffsetsKey(L-1))
	}
	if C >= 0 {
		logs = append(logs, checkpoint.CommitKey(C))
	}
	for _, k := range logs {
		name := strings.ReplaceAll(k, "/", "-")
		add(name+"-truncated", k, true, func(f Files) { f[k] = cutJSON(f[k]) }, truncated...)
		add(name+"-zero-byte", k, true, func(f Files) { f[k] = []byte{} }, checkpoint.FindingZeroByte)
		add(name+"-v99", k, true, func(f Files) { f[k] = v99(f[k]) }, checkpoint.FindingUnsupportedVersion)
	}

	// metadata
	md := checkpoint.MetadataKey
	if clean[md] != nil {
		add("metadata-truncated", md, true, func(f Files) { f[md] = cutJSON(f[md]) }, truncated...)
		add("metadata-zero-byte", md, true, func(f Files) { f[md] = []byte{} }, checkpoint.FindingZeroByte)
		// metadata has no version line: a "v99" header makes it unreadable
		add("metadata-v99", md, true, func(f Files) { f[md] = append([]byte("v99\n"), f[md]...) },
			checkpoint.FindingCorrupt, checkpoint.FindingUnsupportedVersion)
		add("metadata-missing", md, true, func(f Files) { delete(f, md) }, checkpoint.FindingMetadataMissing)
	}

	// the logs disagree
	if C >= 0 {
		ahead := checkpoint.CommitKey(L + 1)
		add("commits-ahead-of-offsets", ahead, true, func(f Files) { f[ahead] = bytes.Clone(f[checkpoint.CommitKey(C)]) },
			checkpoint.FindingCommitsAhead)
	}
	// a log entry named by a batch id no batch can follow (math.MaxInt64)
	for _, dir := range []string{checkpoint.OffsetsDir, checkpoint.CommitsDir} {
		src := checkpoint.OffsetsKey(L)
		if dir == checkpoint.CommitsDir {
			if C < 0 {
				continue
			}
			src = checkpoint.CommitKey(C)
		}
		k := dir + "/9223372036854775807"
		add(dir+"-batch-id-out-of-range", k, true, func(f Files) { f[k] = bytes.Clone(f[src]) }, checkpoint.FindingBatchOutOfRange)
	}
	if L > 0 && clean[checkpoint.OffsetsKey(L-1)] != nil {
		k := checkpoint.OffsetsKey(L - 1)
		add("offsets-previous-missing", k, true, func(f Files) { delete(f, k) }, checkpoint.FindingOffsetsGapLatest)
	}

	// leftover temp files (not fatal: Spark and ckgate ignore them)
	temps := []string{
		path.Join(checkpoint.OffsetsDir, fmt.Sprintf(".%d.%s.tmp", L+1, tmpUUID)),                    // Spark's createAtomic
		path.Join(checkpoint.CommitsDir, fmt.Sprintf("..%d.%s.tmp.crc", max(C, 0), tmpUUID)),         // its Hadoop checksum
		fmt.Sprintf(".%s.%s.tmp", checkpoint.MetadataKey, tmpUUID),                                   // a first run's metadata
		path.Join(checkpoint.SourcesDir, "0", fmt.Sprintf(".%d.%s.tmp", L+1, tmpUUID)),               // a source log entry
		path.Join(checkpoint.StateDir, "0", "0", fmt.Sprintf(".%d.delta.%s.TID7.tmp", L+2, tmpUUID)), // a state file (in a task)
	}
	for _, k := range temps {
		part := strings.Split(k, "/")[0]
		if strings.HasPrefix(part, ".") {
			part = "root"
		}
		if part == checkpoint.StateDir && !hasPrefix(clean, checkpoint.StateDir+"/") ||
			part == checkpoint.SourcesDir && !hasPrefix(clean, checkpoint.SourcesDir+"/") {
			continue
		}
		add("temp-file-"+part+suffix(k), k, false, func(f Files) { f[k] = []byte("v1\n{\"batchWatermarkMs\":0,\"batch") },
			checkpoint.FindingTempFile)
	}

	// the source log (a file source's list of files per batch)
	if k := latestSourceLog(clean); k != "" && bytes.HasPrefix(clean[k], []byte("v")) {
		add("source-log-truncated", k, true, func(f Files) { f[k] = cutJSON(f[k]) }, truncated...)
		add("source-log-v99", k, true, func(f Files) { f[k] = v99(f[k]) }, checkpoint.FindingUnsupportedVersion)
	}

	// operator metadata (state/<op>/_metadata/metadata)
	if k := checkpoint.OperatorMetadataKey("0"); clean[k] != nil {
		add("operator-metadata-truncated", k, true, func(f Files) { f[k] = cutJSON(f[k]) }, truncated...)
		add("operator-metadata-v99", k, true, func(f Files) { f[k] = v99(f[k]) }, checkpoint.FindingUnsupportedVersion)
	}

	// state files a restart reads
	required := L
	if C >= L {
		required = L + 1
	}
	delta, snap := stateChain(clean, required, C, stateCodec(clean, L))
	unrebuildable := []string{checkpoint.FindingTruncated, checkpoint.FindingCorrupt, checkpoint.FindingStateUnrebuildable, checkpoint.FindingChecksumMismatch}
	for _, k := range []string{delta, snap} {
		if k == "" {
			continue
		}
		kind := "delta"
		switch {
		case strings.HasSuffix(k, ".snapshot"):
			kind = "snapshot"
		case strings.HasSuffix(k, ".zip"):
			kind = "zip"
		case strings.HasSuffix(k, ".changelog"):
			kind = "changelog"
		}
		add("state-"+kind+"-truncated", k, true, func(f Files) { f[k] = f[k][:len(f[k])/2] }, unrebuildable...)
		add("state-"+kind+"-zero-byte", k, true, func(f Files) { f[k] = []byte{} }, append([]string{checkpoint.FindingZeroByte}, unrebuildable...)...)
		if !strings.HasSuffix(k, ".zip") { // inspect does not read the SST files inside a zip
			add("state-"+kind+"-bit-flip", k, true, func(f Files) { f[k][len(f[k])/2] ^= 0x20 }, unrebuildable...)
		}
	}

	// ckgate's own files
	if k := checkpoint.PlanKey; clean[k] != nil {
		add("plan-truncated", k, true, func(f Files) { f[k] = cutJSON(f[k]) }, truncated...)
		add("plan-zero-byte", k, true, func(f Files) { f[k] = []byte{} }, checkpoint.FindingZeroByte)
		add("plan-not-json", k, true, func(f Files) { f[k] = []byte("v99\n" + string(f[k])) }, checkpoint.FindingCorrupt)
	}
	// a store's schema file (Spark 3.1+)
	if k := checkpoint.SchemaKey("0", checkpoint.DefaultStore); clean[k] != nil {
		add("state-schema-truncated", k, true, func(f Files) { f[k] = f[k][:len(f[k])/2] }, truncated...)
	}

	// a stale Hadoop checksum sidecar (Spark's own goldens have some): a
	// warning, Spark restarts
	if sc := checkpoint.OffsetsDir + fmt.Sprintf("/.%d.crc", L); len(clean[sc]) > 8 {
		k := checkpoint.OffsetsKey(L)
		add("hadoop-crc-stale", k, false, func(f Files) { b := bytes.Clone(f[sc]); b[len(b)-1] ^= 0xff; f[sc] = b },
			checkpoint.FindingChecksumMismatch)
	}

	if k := "_ckgate/writer"; clean[k] != nil {
		add("writer-record-truncated", k, true, func(f Files) { f[k] = cutJSON(f[k]) }, truncated...)
	}
	return cs
}

// ids returns the batch ids of the files directly under dir, ascending.
func ids(f Files, dir string) []int64 {
	var out []int64
	for k := range f {
		name, ok := strings.CutPrefix(k, dir+"/")
		if !ok || strings.Contains(name, "/") {
			continue
		}
		if n, err := strconv.ParseInt(name, 10, 64); err == nil && n >= 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func hasPrefix(f Files, p string) bool {
	for k := range f {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func suffix(k string) string {
	if strings.HasSuffix(k, ".crc") {
		return "-crc"
	}
	return ""
}

// cutJSON cuts a text file in the middle of its JSON (the second line of a
// log entry; the middle of a plain JSON file).
func cutJSON(b []byte) []byte {
	start := 0
	if bytes.HasPrefix(b, []byte("v")) {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			start = i + 1
		}
	}
	end := len(b)
	if i := bytes.IndexByte(b[start:], '\n'); i >= 0 {
		end = start + i
	}
	cut := start + (end-start)/2
	if cut <= start {
		cut = start + 1
	}
	return bytes.Clone(b[:min(cut, len(b))])
}

// v99 replaces the version line of a log entry with v99.
func v99(b []byte) []byte {
	rest := []byte{}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		rest = b[i:]
	}
	return append([]byte("v99"), rest...)
}

// latestSourceLog returns the key of the latest entry of sources/0/.
func latestSourceLog(f Files) string {
	best, bestID := "", int64(-1)
	for k := range f {
		name, ok := strings.CutPrefix(k, checkpoint.SourcesDir+"/0/")
		if !ok || strings.Contains(name, "/") {
			continue
		}
		id, _, ok := checkpoint.ParseLogFileName(name)
		if ok && id > bestID {
			best, bestID = k, id
		}
	}
	return best
}
