package delta

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint/errkind"
)

// Error kinds of this package; check them with errors.Is.
var (
	// ErrNotDelta: the location is not a Delta table (no _delta_log).
	ErrNotDelta = errors.New("not a Delta table")
	// ErrCorrupt: a log file does not follow the Delta format. It is
	// errkind.Corrupt too (checkpoint.ErrCorrupt, engine.ErrCorrupt), so one
	// errors.Is answers whichever layer found the damage.
	ErrCorrupt error = corruptLog{}
	// ErrLogGap: a version needed to replay the log is missing.
	ErrLogGap = errors.New("Delta log has a gap")
	// ErrUnsupportedProtocol: a reader version or reader feature this
	// package does not read.
	ErrUnsupportedProtocol = errors.New("unsupported Delta protocol")
	// ErrCatalogManaged: the table is catalog managed; the storage log is
	// not the whole truth.
	ErrCatalogManaged = errors.New("catalog-managed Delta table")
)

// corruptLog is ErrCorrupt: its own value, which errors.Is also matches to
// errkind.Corrupt.
type corruptLog struct{}

func (corruptLog) Error() string { return "corrupt Delta log" }

// Is makes errors.Is(err, errkind.Corrupt) hold.
func (corruptLog) Is(target error) bool { return target == errkind.Corrupt }

// corruptf returns an ErrCorrupt error naming key.
func corruptf(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, key, fmt.Sprintf(format, args...))
}

// GapError says which versions of a log are missing. It matches ErrLogGap.
type GapError struct {
	Log     string // the log directory, e.g. "_delta_log/"
	From    int64  // the first missing version
	To      int64  // the last missing version (== From for one)
	Missing string // the key of the first missing commit file
	Why     string // what needed it
}

func (e *GapError) Error() string {
	span := fmt.Sprintf("version %d", e.From)
	if e.To > e.From {
		span = fmt.Sprintf("versions %d to %d", e.From, e.To)
	}
	msg := fmt.Sprintf("Delta log %s is missing %s (%s does not exist)", e.Log, span, e.Missing)
	if e.Why != "" {
		msg += ": " + e.Why
	}
	return msg
}

// Is makes errors.Is(err, ErrLogGap) hold.
func (e *GapError) Is(target error) bool { return target == ErrLogGap }

// ProtocolError names what of a table's protocol this package cannot read.
// It matches ErrUnsupportedProtocol, or ErrCatalogManaged for that feature.
type ProtocolError struct {
	Key              string   // the log file that set the protocol
	MinReaderVersion int      // the table's reader version
	Features         []string // the reader features not understood
}

func (e *ProtocolError) Error() string {
	if len(e.Features) == 0 {
		return fmt.Sprintf("%s: Delta table needs reader version %d; ckgate reads versions 1 to %d", e.Key, e.MinReaderVersion, MaxReaderVersion)
	}
	if e.catalog() {
		return fmt.Sprintf("%s: Delta table is catalog managed (reader feature %s): its newest commits live in the catalog, not in the log on storage", e.Key, FeatureCatalogManaged)
	}
	return fmt.Sprintf("%s: Delta table needs reader features ckgate does not read: %s", e.Key, strings.Join(e.Features, ", "))
}

func (e *ProtocolError) catalog() bool {
	for _, f := range e.Features {
		if f == FeatureCatalogManaged || f == featureCatalogOwnedPreview {
			return true
		}
	}
	return false
}

// Is makes errors.Is hold for ErrUnsupportedProtocol, and for
// ErrCatalogManaged when that is the feature at fault.
func (e *ProtocolError) Is(target error) bool {
	return target == ErrUnsupportedProtocol || (target == ErrCatalogManaged && e.catalog())
}
