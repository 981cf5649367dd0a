package checkpoint

import (
	"context"
	"errors"
	"fmt"
)

// inspectSink summarises the file sink log of Options.Sink.
func (in *inspector) inspectSink(ctx context.Context) error {
	l, err := listCompactible(ctx, in.o.Sink, SinkMetadataDir)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		in.add(findingForError(SinkMetadataDir, SeverityWarning, "file sink log", err))
		return nil
	}
	s := &SinkReport{Dir: SinkMetadataDir, Files: len(l.files)}
	offset, ours := in.sinkOwner(ctx, s)
	if l.latest >= 0 {
		lb := l.latest
		s.LatestBatch = &lb
		s.CompactInterval = DefaultCompactInterval
		if l.lastCmp >= 0 {
			s.CompactInterval = DeriveCompactInterval(DefaultCompactInterval, l.lastCmp)
		}
	}
	if l.latest >= 0 && ours {
		// this query's batch b is manifest b+offset
		s.CommittedLatestOffsets = in.L >= 0 && l.latest >= in.L+offset
		if in.L >= 0 && l.latest > in.L+offset {
			in.add(Finding{ID: FindingSinkAhead, Severity: SeverityWarning, Key: l.files[l.latest],
				Message: fmt.Sprintf("the file sink log holds manifest %d, beyond the latest offsets batch %d (manifest %d): is the sink shared with another query?", l.latest, in.L, in.L+offset)})
		}
	}
	in.r.Sink = s
	return nil
}

// sinkOwner reads the sink's owner log into s. It returns the manifest
// offset of this checkpoint's batches and whether they are this
// checkpoint's to compare with its log: a sink without owner records is
// compared as before (batch id = manifest id); a sink another query owns
// is a finding, and its manifests are not this checkpoint's batches.
func (in *inspector) sinkOwner(ctx context.Context, s *SinkReport) (int64, bool) {
	owner, n, err := ReadSinkOwner(ctx, in.o.Sink)
	if err != nil {
		key := SinkOwnerDir
		var ke *KeyError
		if errors.As(err, &ke) {
			key = ke.Key
		}
		in.add(findingForError(key, SeverityWarning, "file sink owner record", err))
		return 0, false
	}
	if owner == nil {
		return 0, true
	}
	s.Owner = owner
	if in.r.QueryID == "" || owner.QueryID == in.r.QueryID {
		return owner.BatchOffset, true
	}
	in.add(Finding{ID: FindingSinkOwner, Severity: SeverityWarning, Key: SinkOwnerKey(n),
		Message: fmt.Sprintf("the file sink is owned by %s, not by this checkpoint's query %s: a run of this checkpoint is refused on this sink", owner, in.r.QueryID)})
	return 0, false
}
