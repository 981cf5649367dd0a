package checkpoint

import (
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Keys of a checkpoint, relative to its root (Spark's layout, which
// ckgate's engine writes too):
//
//	metadata                                       query id
//	offsets/<N>, commits/<N>                       write-ahead and commit logs
//	sources/<i>/<N>[.compact]                      per-source metadata
//	state/<op>/<part>/[<store>/]<v>[_<uid>].delta|snapshot|zip|changelog
//	state/<op>/<part>/[<store>/]SSTs/…, logs/…    RocksDB files the zips name
//	state/<op>/0/[<store>/]_metadata/schema        state schema v1/v2
//	state/<op>/_metadata/metadata                  operator metadata v1
//	state/<op>/_metadata/v2/<N>                    operator metadata v2
//	state/<op>/_stateSchema/<store>/<N>_<uuid>     state schema v3
//	_ckgate/writer, _ckgate/plan.json              ckgate's writer record and plan
//
// Names that are not part of the layout (dotfiles, *.tmp) are ignored by
// Spark; Inspect reports them.
const (
	MetadataKey = gateway.MetadataKey
	OffsetsDir  = "offsets"
	CommitsDir  = "commits"
	SourcesDir  = "sources"
	StateDir    = "state"
	CkgateDir   = "_ckgate"
	PlanKey     = "_ckgate/plan.json"
	// RestoreKey is written first by a restore into the root (ckgate
	// restore), RestoredKey last: the first without the second is a
	// restore that did not complete.
	RestoreKey    = "_ckgate/restore.json"
	RestoredKey   = "_ckgate/restored.json"
	DefaultStore  = "default"
	schemaFile    = "schema"
	metadataDir   = "_metadata"
	stateSchemaV3 = "_stateSchema"
)

// OffsetsKey is the key of offsets/<batch>.
func OffsetsKey(batch int64) string { return OffsetsDir + "/" + strconv.FormatInt(batch, 10) }

// CommitKey is the key of commits/<batch>.
func CommitKey(batch int64) string { return CommitsDir + "/" + strconv.FormatInt(batch, 10) }

// SourceLogKey is the key of sources/<source>/<batch>[.compact].
func SourceLogKey(source int, batch int64, compact bool) string {
	k := SourcesDir + "/" + strconv.Itoa(source) + "/" + strconv.FormatInt(batch, 10)
	if compact {
		k += ".compact"
	}
	return k
}

// OperatorMetadataKey is the key of an operator's v1 metadata.
func OperatorMetadataKey(op string) string { return StateDir + "/" + op + "/_metadata/metadata" }

// OperatorMetadataV2Key is the key of an operator's v2 metadata of a run
// that started at batch.
func OperatorMetadataV2Key(op string, batch int64) string {
	return StateDir + "/" + op + "/_metadata/v2/" + strconv.FormatInt(batch, 10)
}

// StoreDirKey is the directory of one store of one partition.
func StoreDirKey(op string, part int, store string) string {
	k := StateDir + "/" + op + "/" + strconv.Itoa(part)
	if store != "" && store != DefaultStore {
		k += "/" + store
	}
	return k
}

// SchemaKey is the key of a store's v1/v2 schema file (in partition 0).
func SchemaKey(op, store string) string { return StoreDirKey(op, 0, store) + "/_metadata/schema" }

// State file kinds.
const (
	KindDelta     = "delta"
	KindSnapshot  = "snapshot"
	KindZip       = "zip"
	KindChangelog = "changelog"
)

// StateFileName is the parsed name of a state store file:
// <version>[_<uniqueId>].<kind>.
type StateFileName struct {
	Version  int64
	UniqueID string // checkpoint format v2 / ckgate attempt id; "" if none
	Kind     string // KindDelta, KindSnapshot, KindZip, KindChangelog
}

// String returns the file name.
func (n StateFileName) String() string {
	s := strconv.FormatInt(n.Version, 10)
	if n.UniqueID != "" {
		s += "_" + n.UniqueID
	}
	return s + "." + n.Kind
}

// IsBase reports whether the file is a full copy of the state (a snapshot
// or a RocksDB zip) rather than a change set.
func (n StateFileName) IsBase() bool { return n.Kind == KindSnapshot || n.Kind == KindZip }

// ParseStateFileName parses a state store file name.
func ParseStateFileName(name string) (StateFileName, bool) {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return StateFileName{}, false
	}
	kind := name[dot+1:]
	switch kind {
	case KindDelta, KindSnapshot, KindZip, KindChangelog:
	default:
		return StateFileName{}, false
	}
	base := name[:dot]
	ver, uid, _ := strings.Cut(base, "_")
	v, err := strconv.ParseInt(ver, 10, 64)
	if err != nil || v < 0 || !gateway.AllDigits(ver) {
		return StateFileName{}, false
	}
	if strings.Contains(base, "_") && uid == "" {
		return StateFileName{}, false
	}
	return StateFileName{Version: v, UniqueID: uid, Kind: kind}, true
}

// entryKind classifies a key of a checkpoint.
type entryKind int

const (
	entUnknown entryKind = iota
	entMetadata
	entOffsets
	entCommit
	entSourceLog
	entOpMetaV1
	entOpMetaV2
	entSchemaV3
	entSchema
	entStateFile
	entStateAux
	entHadoopCRC
	entJSONCRC
	entTemp
	entDotfile
	entWriter
	entPlan
	entCkgateOther
	entBatchRange // a log file named by a batch id beyond MaxBatchID
)

// entry is one classified key.
type entry struct {
	gateway.Attrs
	kind    entryKind
	batch   int64  // offsets, commits, source log, operator metadata v2, schema v3
	compact bool   // source log
	source  string // source log
	op      string // state
	part    int    // state
	store   string // state
	file    StateFileName
	target  string // checksum sidecars: the key covered
}

// classify places a key of the checkpoint in the layout.
func classify(a gateway.Attrs) entry {
	e := entry{Attrs: a, part: -1}
	segs := strings.Split(a.Key, "/")
	name := segs[len(segs)-1]
	if strings.HasPrefix(name, ".") {
		if t, ok := hadoopCRCTarget(a.Key); ok && !strings.HasSuffix(t, ".tmp") {
			e.kind, e.target = entHadoopCRC, t
		} else if strings.HasSuffix(name, ".tmp") || ok && strings.HasSuffix(t, ".tmp") {
			// a temp file, or the Hadoop sidecar of one (..<name>.<uuid>.tmp.crc)
			e.kind = entTemp
		} else {
			e.kind = entDotfile
		}
		return e
	}
	if strings.HasSuffix(name, ".tmp") {
		e.kind = entTemp
		return e
	}
	switch segs[0] {
	case MetadataKey:
		if len(segs) == 1 {
			e.kind = entMetadata
		}
	case OffsetsDir, CommitsDir:
		if len(segs) == 2 {
			id, err := ParseBatchID(name)
			switch {
			case err == nil:
				e.batch = id
				e.kind = entOffsets
				if segs[0] == CommitsDir {
					e.kind = entCommit
				}
			case errors.Is(err, ErrBatchRange):
				e.kind = entBatchRange
			}
		}
	case SourcesDir:
		if len(segs) == 3 {
			id, cmp, err := ParseLogName(name)
			switch {
			case err == nil:
				e.kind, e.source, e.batch, e.compact = entSourceLog, segs[1], id, cmp
			case errors.Is(err, ErrBatchRange):
				e.kind = entBatchRange
			}
		}
	case StateDir:
		classifyState(&e, segs)
	case CkgateDir:
		switch a.Key {
		case gateway.WriterKey:
			e.kind = entWriter
		case PlanKey:
			e.kind = entPlan
		default:
			e.kind = entCkgateOther
		}
	}
	return e
}

func classifyState(e *entry, segs []string) {
	if len(segs) < 3 {
		return
	}
	e.op = segs[1]
	switch segs[2] {
	case metadataDir:
		switch {
		case len(segs) == 4 && segs[3] == "metadata":
			e.kind = entOpMetaV1
		case len(segs) == 5 && segs[3] == "v2":
			if id, err := strconv.ParseInt(segs[4], 10, 64); err == nil && id >= 0 {
				e.kind, e.batch = entOpMetaV2, id
			}
		}
		return
	case stateSchemaV3:
		if len(segs) == 5 {
			b, _, ok := strings.Cut(segs[4], "_")
			if id, err := strconv.ParseInt(b, 10, 64); ok && err == nil && id >= 0 {
				e.kind, e.store, e.batch = entSchemaV3, segs[3], id
			}
		}
		return
	}
	part, err := strconv.Atoi(segs[2])
	if err != nil || part < 0 || !gateway.AllDigits(segs[2]) {
		return
	}
	rest := segs[3:]
	store := DefaultStore
	// a named store is a directory that is none of the default store's
	if len(rest) >= 2 && rest[0] != metadataDir && rest[0] != "SSTs" && rest[0] != "logs" {
		store, rest = rest[0], rest[1:]
	}
	e.part, e.store = part, store
	switch {
	case len(rest) == 1:
		if fn, ok := ParseStateFileName(rest[0]); ok {
			e.kind, e.file = entStateFile, fn
		} else if main, ok := isJSONChecksumName(rest[0]); ok {
			if _, ok := ParseStateFileName(main); ok {
				e.kind, e.target = entJSONCRC, path.Join(path.Dir(e.Key), main)
			}
		}
	case len(rest) == 2 && rest[0] == metadataDir && rest[1] == schemaFile:
		e.kind = entSchema
	case len(rest) == 2 && (rest[0] == "SSTs" || rest[0] == "logs"):
		e.kind = entStateAux
	}
}
