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
	// Next is the safe next step (set by Inspect for every finding).
	Next string `json:"next,omitempty"`
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
	FindingNotRegular            = "not-regular-file"
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
	FindingSinkOwner             = "sink-owner-differs"
	FindingBatchOutOfRange       = "batch-out-of-range"
	FindingRestoreIncomplete     = "restore-incomplete"
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
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrTooLarge), errors.Is(err, gateway.ErrTooLarge):
		// far larger than any file of the layout: damaged or planted
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

// Safe next steps, shared by the findings and the engine's refusals.
const (
	// NextRestore is the step for a file a restart needs that is damaged.
	NextRestore = "restore the checkpoint from an archive (`ckgate archive verify ARCHIVE`, then `ckgate restore ARCHIVE DEST` into a new root and run on DEST) or start over with `ckgate fresh-start`; do not edit or delete it by hand, and do not restart before `ckgate inspect` is clean"
	// NextNewer is the step for a format version newer than understood.
	NextNewer = "it was written by a newer Spark or ckgate: restart the query with that version (an older reader must not resume it), or start over with `ckgate fresh-start`"
)

// nextStep is the safe next step for a finding: what to do about it
// without losing or corrupting the checkpoint.
func nextStep(f Finding) string {
	if f.Key == gateway.WriterKey && f.ID != FindingWriterLive && f.ID != FindingNotRegular {
		return "it is ckgate's single-writer lock, not checkpoint data: make sure no ckgate run uses this checkpoint, then remove it with `ckgate store rm URL " + gateway.WriterKey + "` (the next run creates a new one)"
	}
	switch f.ID {
	case FindingNotRegular:
		return "neither Spark nor ckgate writes one: find out what created it and remove it by hand; if it took the place of a checkpoint file, restore the checkpoint from an archive (`ckgate restore ARCHIVE DEST`); until then every reader refuses it and `ckgate archive` refuses the checkpoint"
	case FindingUnsupportedVersion:
		return NextNewer
	case FindingUnreadable:
		return "check the reading principal's permissions (`ckgate validate-access`) and the store, then inspect again; nothing is wrong with the file until it can be read"
	case FindingMetadataMissing:
		return "restore the checkpoint with its \"metadata\" (it holds the query id) from an archive (`ckgate restore ARCHIVE DEST`); do not let Spark or ckgate create a new one over the old offsets (SPARK-55058), or start over with `ckgate fresh-start`"
	case FindingOffsetsGapLatest, FindingCommitsAhead, FindingStateWithoutOffsets:
		return "restore the checkpoint with the missing offsets entries from an archive (`ckgate restore ARCHIVE DEST`), or start over with `ckgate fresh-start`; do not delete log entries by hand"
	case FindingCommitsBehind, FindingNoCommitLog:
		return "a restart re-runs the latest batch: make sure its sink is idempotent (the file sink is), or restore the checkpoint with the missing commits from an archive (`ckgate restore ARCHIVE DEST`)"
	case FindingOffsetsGap, FindingCommitsGap, FindingCommitWithoutOffsets:
		return "no action needed to restart (only the latest entries are read); keep an archive before any clean-up"
	case FindingTempFile:
		return "no action needed: readers ignore temp files; remove it by hand only while no writer runs (`ckgate inspect` shows the writer)"
	case FindingIgnoredFile, FindingOrphanChecksum:
		return "no action needed: readers ignore it"
	case FindingStateUnrebuildable, FindingStatePartitionMissing, FindingStateMissing:
		return "restore the checkpoint with its state files from an archive (`ckgate restore ARCHIVE DEST`) or start over with `ckgate fresh-start`; a restart cannot rebuild the state without them"
	case FindingWriterLive:
		return "wait until the writer stops or its lease expires; `ckgate run --force` takes over and fences it"
	case FindingUnsupportedCodec:
		return "inspect cannot decode this codec; Spark reads it with the codec recorded in the offsets conf"
	case FindingSinkAhead:
		return "the sink holds batches the checkpoint does not: check that the sink directory belongs to this query before restarting"
	case FindingSinkOwner:
		return "point this query at a sink path of its own, or hand the sink over deliberately: `ckgate run --adopt-sink` (its batches then follow the owner's), or run the new root of the owner's `ckgate fresh-start`"
	case FindingPartitionsMismatch:
		return "run with the partition count the checkpoint records (spark.sql.shuffle.partitions in the offsets conf)"
	case FindingStateNewerThanCommit, FindingStateUncommitted, FindingStateSinglePartition, FindingStatePartitionExtra:
		return "no action needed: a restart does not read these files; retention may delete them once obsolete"
	case FindingBatchOutOfRange:
		return "no Spark or ckgate run can write or resume past this batch id: restore the checkpoint from an archive (`ckgate restore ARCHIVE DEST`), or start over with `ckgate fresh-start`; do not rename log entries by hand"
	case FindingRestoreIncomplete:
		return "run the same `ckgate restore ARCHIVE DEST` again: it checks what is there and copies the rest; until then `ckgate run` refuses this root"
	case FindingSourceLogMissing:
		return "restore the checkpoint with its source log from an archive (`ckgate restore ARCHIVE DEST`), or start over with `ckgate fresh-start`"
	}
	if f.Severity == SeverityError {
		return NextRestore
	}
	return "no action needed to restart: a restart does not read it; keep an archive before any clean-up"
}
