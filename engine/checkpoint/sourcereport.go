package checkpoint

import (
	"fmt"
	"strconv"
)

// buildSources reports each source: its latest offset (offsets/L) and its
// sources/<id>/ log, and checks that a file source's log still holds the
// batches a restart reads.
func (in *inspector) buildSources() {
	seen := map[string]bool{}
	var ids []string
	latest := in.offs[in.L]
	if latest != nil {
		for _, e := range latest.Sources {
			if !seen[e.ID] {
				seen[e.ID] = true
				ids = append(ids, e.ID)
			}
		}
	}
	for _, id := range sortedKeys(in.idx.sources) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		s := Source{ID: id, Kind: OffsetUnknown}
		if latest != nil {
			for _, e := range latest.Sources {
				if e.ID == id {
					so := ParseSourceOffset(e)
					s.Offset, s.Kind = &so, so.Kind
				}
			}
		}
		if dir := in.idx.sources[id]; dir != nil {
			l := &SourceLog{Dir: SourcesDir + "/" + id, Files: len(dir.files)}
			lb := dir.latest
			l.LatestBatch = &lb
			if dir.lastCompact >= 0 {
				lc := dir.lastCompact
				l.LatestCompact = &lc
			}
			if info := in.sourceInfo[id]; info != nil {
				l.SourceLogInfo = *info
				switch info.Kind {
				case SourceLogFile:
					s.Kind = OffsetFile
				case SourceLogKafkaInitial:
					s.Kind = OffsetKafka
				case SourceLogRateStart:
					s.Kind = OffsetRate
				}
			}
			s.Log = l
			in.checkSourceLog(id, dir, s.Kind)
		}
		in.r.Sources = append(in.r.Sources, s)
	}
}

// checkSourceLog: a restart asks a file source for the batch (L-1, L] (it
// re-runs L, or replays getBatch for V1 sources when L is committed), which
// reads the source log's batches between the two logOffsets.
func (in *inspector) checkSourceLog(id string, dir *sourceIdx, kind string) {
	if kind != OffsetFile || in.L < 0 {
		return
	}
	end := in.fileLogOffset(in.L, id)
	if end == nil {
		return
	}
	start := int64(-1)
	if in.L > 0 {
		p := in.fileLogOffset(in.L-1, id)
		if p == nil {
			return
		}
		start = *p
	}
	// a compaction file N.compact holds every batch up to N
	for b := max(start+1, dir.lastCompact+1); b <= *end; b++ {
		if dir.files[b] == nil {
			in.add(Finding{ID: FindingSourceLogMissing, Severity: SeverityError, Key: SourcesDir + "/" + id + "/" + strconv.FormatInt(b, 10),
				Message: fmt.Sprintf("file source %s: log batch %d is missing, but batch %d of the query reads log batches %d..%d", id, b, in.L, start+1, *end)})
			return
		}
	}
}

func (in *inspector) fileLogOffset(batch int64, id string) *int64 {
	seq := in.offs[batch]
	if seq == nil {
		return nil
	}
	for _, e := range seq.Sources {
		if e.ID == id && e.Present {
			if n, err := DecodeFileSourceOffset(e.JSON); err == nil {
				return &n
			}
		}
	}
	return nil
}
