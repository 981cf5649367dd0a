package checkpoint

import (
	"context"
	"fmt"

	"github.com/ckgate/ckgate/gateway"
)

// listingFindings reports what the listing alone shows: temp files left by
// a failed rename, ignored names, zero-byte files not read, sidecars
// without a file.
func (in *inspector) listingFindings() {
	x := in.idx
	for _, e := range x.temps {
		in.add(Finding{ID: FindingTempFile, Severity: SeverityWarning, Key: e.Key,
			Message: fmt.Sprintf("leftover temp file (%d bytes) from an interrupted write; Spark ignores it, retention may delete it", e.Size)})
	}
	for _, e := range x.badBatch {
		in.add(Finding{ID: FindingBatchOutOfRange, Severity: SeverityError, Key: e.Key,
			Message: fmt.Sprintf("named by a batch id beyond the largest ckgate accepts (%d); not read as a batch", MaxBatchID)})
	}
	if x.byKey[RestoreKey] != nil && x.byKey[RestoredKey] == nil {
		in.add(Finding{ID: FindingRestoreIncomplete, Severity: SeverityError, Key: RestoreKey,
			Message: "a restore into this root began and did not complete (no " + RestoredKey + "): it is not a whole checkpoint"})
	}
	for _, e := range x.ignored {
		in.add(Finding{ID: FindingIgnoredFile, Severity: SeverityInfo, Key: e.Key,
			Message: "not part of the checkpoint layout; ignored"})
	}
	for _, e := range x.zero {
		if in.flagged[e.Key] {
			continue
		}
		in.add(Finding{ID: FindingZeroByte, Severity: SeverityWarning, Key: e.Key, Message: "empty file (0 bytes)"})
	}
	for target, sc := range x.hadoopCRC {
		if x.byKey[target] == nil {
			in.add(Finding{ID: FindingOrphanChecksum, Severity: SeverityInfo, Key: sc.Key,
				Message: fmt.Sprintf("checksum sidecar of %s, which does not exist", target)})
		}
	}
	for target, sc := range x.jsonCRC {
		if x.byKey[target] == nil {
			in.add(Finding{ID: FindingOrphanChecksum, Severity: SeverityInfo, Key: sc.Key,
				Message: fmt.Sprintf("checksum file of %s, which does not exist", target)})
		}
	}
}

// verifyRemaining reads and verifies every file with a checksum sidecar
// that Inspect did not read already.
func (in *inspector) verifyRemaining(ctx context.Context) error {
	var tasks []func(context.Context) error
	check := func(target string) {
		e := in.idx.byKey[target]
		if e == nil || in.verified[target] {
			return
		}
		in.verified[target] = true
		tasks = append(tasks, func(ctx context.Context) error {
			data, _, err := gateway.GetBounded(ctx, in.st, e.Key, max(in.o.MaxDecodeBytes, maxLogBytes))
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				in.add(findingForError(e.Key, SeverityWarning, "checksummed file", err))
				return nil
			}
			res, err := in.verifyChecksums(ctx, e, data)
			in.reportChecksums(e.Key, SeverityWarning, res)
			return err
		})
	}
	for t := range in.idx.hadoopCRC {
		check(t)
	}
	for t := range in.idx.jsonCRC {
		check(t)
	}
	return runAll(ctx, in.o.Concurrency, tasks)
}

// nonRegularFindings reports every name in the checkpoint's tree that is
// not a regular file (a FIFO, a device, a socket: gateway.ListNonRegular,
// which only a local store has). Listings skip them and reads refuse them,
// so without this finding a FIFO where "metadata" or the writer record
// belongs would look like a missing file.
func (in *inspector) nonRegularFindings(ctx context.Context) error {
	for e, err := range gateway.ListNonRegular(ctx, in.st, "") {
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			in.add(Finding{ID: FindingUnreadable, Severity: SeverityWarning, Key: "", Message: fmt.Sprintf("listing the names that are not regular files: %v", err)})
			return nil
		}
		in.add(Finding{ID: FindingNotRegular, Severity: SeverityError, Key: e.Key,
			Message: fmt.Sprintf("%q is %s, not a regular file: it is not read", e.Key, gateway.FileType(e.Mode))})
	}
	return nil
}
