package checkpoint

import (
	"context"
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
	if l.latest >= 0 {
		lb := l.latest
		s.LatestBatch = &lb
		s.CompactInterval = DefaultCompactInterval
		if l.lastCmp >= 0 {
			s.CompactInterval = DeriveCompactInterval(DefaultCompactInterval, l.lastCmp)
		}
		s.CommittedLatestOffsets = in.L >= 0 && l.latest >= in.L
		if in.L >= 0 && l.latest > in.L {
			in.add(Finding{ID: FindingSinkAhead, Severity: SeverityWarning, Key: l.files[l.latest],
				Message: fmt.Sprintf("the file sink log holds batch %d, beyond the latest offsets batch %d: is the sink shared with another query?", l.latest, in.L)})
		}
	}
	in.r.Sink = s
	return nil
}
