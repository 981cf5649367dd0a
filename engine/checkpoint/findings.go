package checkpoint

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/ckgate/ckgate/gateway"
)

// Severity of a finding.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding is one problem or remark, naming the key it is about.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Key      string   `json:"key"`
	Message  string   `json:"message"`
}

// Finding ids. They are stable: tools may match on them. The package
// documentation has the table of what each means.
const (
	FindingMetadataMissing       = "metadata-missing"
	FindingOffsetsGapLatest      = "offsets-gap-latest"
	FindingOffsetsGap            = "offsets-gap"
	FindingCommitsAhead          = "commits-ahead"
	FindingCommitsBehind         = "commits-behind"
	FindingCommitsGap            = "commits-gap"
	FindingCommitWithoutOffsets  = "commit-without-offsets"
	FindingNoCommitLog           = "no-commit-log"
	FindingZeroByte              = "zero-byte"
	FindingTruncated             = "truncated"
	FindingCorrupt               = "corrupt"
	FindingUnsupportedVersion    = "unsupported-version"
	FindingUnreadable            = "unreadable"
	FindingTempFile              = "temp-file"
	FindingIgnoredFile           = "ignored-file"
	FindingChecksumMismatch      = "checksum-mismatch"
	FindingOrphanChecksum        = "orphan-checksum"
	FindingStateUnrebuildable    = "state-unrebuildable"
	FindingStatePartitionMissing = "state-partition-missing"
	FindingStateSinglePartition  = "state-single-partition"
	FindingStatePartitionExtra   = "state-partition-extra"
	FindingStateNewerThanCommit  = "state-newer-than-commit"
	FindingStateUncommitted      = "state-uncommitted"
	FindingStateWithoutOffsets   = "state-without-offsets"
	FindingStateMissing          = "state-missing"
	FindingUnsupportedCodec      = "unsupported-codec"
	FindingWriterLive            = "writer-live"
	FindingSourceLogMissing      = "source-log-missing"
	FindingPartitionsMismatch    = "partitions-mismatch"
	FindingSinkAhead             = "sink-ahead"
)

// findingForError turns the error of reading or decoding key into a
// finding with the given severity: the id says what kind of error it was.
func findingForError(key string, sev Severity, what string, err error) Finding {
	id := FindingCorrupt
	var ve *VersionError
	var cm *ChecksumMismatch
	switch {
	case errors.As(err, &ve):
		id = FindingUnsupportedVersion
	case errors.As(err, &cm):
		id = FindingChecksumMismatch
	case errors.Is(err, ErrTruncated):
		id = FindingTruncated
	case errors.Is(err, ErrUnsupportedCodec):
		id = FindingUnsupportedCodec
	case errors.Is(err, ErrCorrupt):
		id = FindingCorrupt
	case gateway.KindOf(err) != nil:
		id = FindingUnreadable
	}
	return Finding{ID: id, Severity: sev, Key: key, Message: fmt.Sprintf("%s: %v", what, err)}
}

// sortFindings orders findings by severity, id and key, and drops exact
// duplicates.
func sortFindings(fs []Finding) []Finding {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity.rank(), b.Severity.rank()),
			cmp.Compare(a.ID, b.ID), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(fs)
}
