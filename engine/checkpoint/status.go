package checkpoint

import (
	"fmt"
	"maps"
	"time"
)

// Relevant confs Spark restores from the offset log, with the value it
// forces when the key is missing (OffsetSeqMetadata.relevantSQLConfDefaultValues).
var confDefaults = map[string]string{
	"spark.sql.streaming.multipleWatermarkPolicy":                   "min",
	"spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion": "1",
	"spark.sql.streaming.aggregation.stateFormatVersion":            "1",
	"spark.sql.streaming.join.stateFormatVersion":                   "1",
	ConfCompressionCodec: "lz4",
	"spark.sql.streaming.statefulOperator.useStrictDistribution": "false",
	"spark.sql.optimizer.pruneFiltersCanPruneStreamingSubplan":   "true",
	"spark.sql.streaming.stateStore.encodingFormat":              "unsaferow",
	"spark.sql.streaming.stateStore.rowChecksum.enabled":         "false",
}

// Confs the report reads.
const (
	ConfShufflePartitions = "spark.sql.shuffle.partitions"
	ConfProviderClass     = "spark.sql.streaming.stateStore.providerClass"
)

// decideStatus applies Spark's restart rules (SPARK-FORMAT.md §9.2, §13)
// to the listing and the latest entries.
func (in *inspector) decideStatus() {
	r, x := in.r, in.idx
	L, C := in.L, in.C
	if L >= 0 {
		r.LatestOffsetsBatch = &L
	}
	if C >= 0 {
		r.LatestCommitBatch = &C
	}
	offIDs, comIDs := sortedIDs(x.offsets), sortedIDs(x.commits)
	r.OffsetsLog = LogSummary{Count: len(offIDs), Ranges: ranges(offIDs)}
	r.CommitLog = LogSummary{Count: len(comIDs), Ranges: ranges(comIDs)}
	if seq := in.offs[L]; seq != nil {
		r.Format.OffsetLogVersion = seq.Version
		if seq.Metadata != nil {
			maps.Copy(r.Confs, seq.Metadata.Conf)
			for k, v := range confDefaults {
				if _, ok := seq.Metadata.Conf[k]; !ok {
					if r.ConfDefaults == nil {
						r.ConfDefaults = map[string]string{}
					}
					r.ConfDefaults[k] = v
				}
			}
		}
	}
	if c := in.commits[C]; c != nil {
		r.Format.CommitLogVersion = c.Version
		if c.Version >= 2 {
			r.Format.CheckpointFormat = 2
		}
	}

	bad := false
	flag := func(id string, sev Severity, key, msg string) {
		in.add(Finding{ID: id, Severity: sev, Key: key, Message: msg})
		if sev == SeverityError {
			bad = true
		}
	}
	switch {
	case L < 0 && C < 0:
		if stateBeyondMetadata(x.ops) {
			flag(FindingStateWithoutOffsets, SeverityError, StateDir,
				"state files exist but offsets/ is empty: no batch ever started, or the offset log was deleted")
		}
	case L < 0:
		flag(FindingCommitsAhead, SeverityError, CommitKey(C),
			fmt.Sprintf("commits up to batch %d exist but offsets/ is empty", C))
	default:
		if x.metadata == nil {
			flag(FindingMetadataMissing, SeverityError, MetadataKey,
				fmt.Sprintf("offsets up to batch %d exist but the query metadata file is missing (SPARK-55058): a restart would start a new query id over old offsets", L))
		}
		if L > 0 && x.offsets[L-1] == nil {
			flag(FindingOffsetsGapLatest, SeverityError, OffsetsKey(L-1),
				fmt.Sprintf("offsets/%d is missing but offsets/%d exists: Spark refuses to restart (\"batch %d doesn't exist\")", L-1, L, L-1))
		}
		if C > L {
			flag(FindingCommitsAhead, SeverityError, CommitKey(C),
				fmt.Sprintf("commits/%d is ahead of the latest offsets batch %d: Spark would re-run batch %d and fail writing its commit (CONCURRENT_STREAM_LOG_UPDATE)", C, L, L))
		}
	}
	// the entries a restart reads must be readable and decode
	if x.metadata != nil && (in.metaErr != nil || r.QueryID == "") {
		bad = true
	}
	for _, b := range []int64{L, L - 1} {
		if b >= 0 && x.offsets[b] != nil && in.offs[b] == nil {
			bad = true
		}
	}
	if C >= 0 && x.commits[C] != nil && in.commits[C] == nil {
		bad = true
	}

	switch {
	case bad:
		r.Status = StatusInconsistent
	case L < 0:
		r.Status = StatusEmpty
	case C == L:
		r.Status = StatusClean
	case C < 0:
		r.Status = StatusInFlight
		flag(FindingNoCommitLog, SeverityInfo, CommitsDir,
			fmt.Sprintf("no commit log (Spark 2.1 wrote none, or it was deleted): a restart re-runs batch %d", L))
	case C == L-1:
		r.Status = StatusInFlight
	default:
		r.Status = StatusInFlight
		flag(FindingCommitsBehind, SeverityWarning, CommitKey(C),
			fmt.Sprintf("the latest commit %d is not the latest offsets batch %d or the one before: Spark warns and re-runs batch %d from the offsets of batch %d", C, L, L, L-1))
	}

	// gaps below the latest entries (Spark assumes contiguous logs)
	for _, g := range gaps(offIDs) {
		if g[1] == L-1 {
			if g[0] == g[1] {
				continue // reported as offsets-gap-latest
			}
			g[1] = L - 2
		}
		flag(FindingOffsetsGap, SeverityWarning, OffsetsKey(g[0]), fmt.Sprintf("offsets %s missing between retained batches", rangeText(g)))
	}
	for _, g := range gaps(comIDs) {
		flag(FindingCommitsGap, SeverityWarning, CommitKey(g[0]), fmt.Sprintf("commits %s missing between retained batches", rangeText(g)))
	}
	if L >= 0 {
		var orphan []int64
		for _, id := range comIDs {
			if id >= in.minOff && id <= L && x.offsets[id] == nil {
				orphan = append(orphan, id)
			}
		}
		for _, g := range ranges(orphan) {
			flag(FindingCommitWithoutOffsets, SeverityWarning, CommitKey(g[0]), fmt.Sprintf("commits %s have no offsets entry", rangeText(g)))
		}
	}

	// the watermark the next batch uses, and the state version it loads
	if seq := in.offs[L]; seq != nil && seq.Metadata != nil {
		wm := seq.Metadata.BatchWatermarkMs
		if r.Status == StatusClean {
			if c := in.commits[C]; c != nil {
				wm = max(wm, c.NextBatchWatermarkMs)
			}
		}
		r.WatermarkMs = &wm
	} else if seq != nil {
		zero := int64(0)
		r.WatermarkMs = &zero
	}
	switch {
	case L < 0:
		in.required = 0
	case C >= L:
		in.required = L + 1
	default:
		in.required = L
	}
}

func rangeText(g Range) string {
	if g[0] == g[1] {
		return fmt.Sprint(g[0])
	}
	return fmt.Sprintf("%d..%d", g[0], g[1])
}

// buildBatches details the chosen batches.
func (in *inspector) buildBatches() {
	for _, id := range in.detail {
		if in.idx.offsets[id] == nil && in.idx.commits[id] == nil {
			continue
		}
		b := Batch{ID: id, Committed: in.idx.commits[id] != nil, Offsets: []BatchOffset{}}
		if seq := in.offs[id]; seq != nil {
			if md := seq.Metadata; md != nil {
				wm, ts := md.BatchWatermarkMs, md.BatchTimestampMs
				b.WatermarkMs, b.TimestampMs, b.Epoch = &wm, &ts, md.Epoch
				if ts > 0 {
					b.Time = time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z")
				}
			}
			for _, e := range seq.Sources {
				b.Offsets = append(b.Offsets, BatchOffset{Source: e.ID, SourceOffset: ParseSourceOffset(e)})
			}
		}
		if c := in.commits[id]; c != nil {
			if !c.NoWatermark {
				nw := c.NextBatchWatermarkMs
				b.NextWatermarkMs = &nw
			}
			if b.Epoch == 0 {
				b.Epoch = c.Epoch
			}
			b.Progress = c.Progress
		}
		b.OffsetsWrittenMs, b.CommitWrittenMs = in.writtenMs(in.idx.offsets[id]), in.writtenMs(in.idx.commits[id])
		in.r.Batches = append(in.r.Batches, b)
	}
}

// describeResume says what a restart does, and about the sink.
func (in *inspector) describeResume() {
	r, L := in.r, in.L
	switch r.Status {
	case StatusEmpty:
		r.Resume = &Resume{NextBatch: 0, StateVersion: 0, Note: "no batch yet: a start runs batch 0"}
	case StatusClean:
		r.Resume = &Resume{NextBatch: L + 1, StateVersion: L + 1,
			Note: fmt.Sprintf("batch %d is committed: a restart plans batch %d from the end offsets of batch %d", L, L+1, L)}
	case StatusInFlight:
		wm := ""
		if r.WatermarkMs != nil {
			wm = fmt.Sprintf(" (watermark %d ms)", *r.WatermarkMs)
		}
		note := fmt.Sprintf("batch %d has offsets but no commit: a restart re-runs it with the same offsets, watermark%s and timestamp, loading state version %d; ",
			L, wm, L)
		note += in.sinkNote()
		r.Resume = &Resume{NextBatch: L, Rerun: true, StateVersion: L, Note: note}
	}
	if r.Resume != nil && r.Format.CommitLogVersion >= 2 && r.Writer.Kind == WriterSpark {
		r.Resume.Note += "; the commit log is v2: Spark restarts it only with spark.sql.streaming.stateStore.checkpointFormatVersion=2"
	}
}

// sinkNote says whether the re-run of batch L can duplicate output.
func (in *inspector) sinkNote() string {
	L := in.L
	if s := in.r.Sink; s != nil {
		if s.CommittedLatestOffsets {
			return fmt.Sprintf("the file sink already committed batch %d (%s/%d): the re-run skips writing it", L, s.Dir, L)
		}
		return fmt.Sprintf("the file sink has not committed batch %d: the re-run writes it once", L)
	}
	switch in.r.Writer.SinkKind {
	case "files", "file":
		return "ckgate's file sink commits each batch with a create-only manifest: the re-run is idempotent"
	case "http":
		return "ckgate's HTTP sink keeps a ledger of completed effects: the re-run repeats none"
	case "console":
		return "the console sink prints the batch again"
	case "":
	default:
		return fmt.Sprintf("sink %q: whether the re-run repeats output depends on the sink", in.r.Writer.SinkKind)
	}
	return "whether its sink already wrote it is not recorded here: the file sink (_spark_metadata) skips a committed batch id; Kafka and foreach sinks may write it again unless they are idempotent"
}

// stateBeyondMetadata reports whether an operator holds state files, not
// only its metadata (which ckgate's engine writes before the first batch:
// a first run that found nothing to read leaves it and no offsets).
func stateBeyondMetadata(ops map[string]*opIdx) bool {
	for _, op := range ops {
		if len(op.stores) > 0 || len(op.schemaV3) > 0 {
			return true
		}
	}
	return false
}
