package checkpoint

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/ckgate/ckgate/gateway"
)

// Inspect reads the checkpoint that st holds at its root (wrap a store with
// gateway.WithPrefix for a checkpoint under a prefix) and reports who wrote
// it, where it stands, its batches, sources and state, and its problems.
//
// It lists the checkpoint once (one listing of its root, paged by the
// store; prefix by prefix when the root holds much besides the checkpoint),
// then reads only what the report needs: metadata, the writer
// record and plan, the latest offsets and commit (and offsets/L-1), the
// detailed batches, operator metadata and schema files, the latest file of
// each source log, and per state store partition the files of its latest
// versions and those needed to rebuild the version a restart loads. Reads
// run in parallel, at most Options.Concurrency at a time.
//
// A location with no checkpoint files is ErrNotCheckpoint. Problems with
// files are findings, not errors: Inspect returns an error only when it
// cannot list the store or the context ends.
func Inspect(ctx context.Context, st gateway.Store, opts Options) (*Report, error) {
	o := opts.withDefaults()
	idx, err := listCheckpoint(ctx, st, o.Concurrency)
	if err != nil {
		return nil, err
	}
	if !idx.isCheckpoint() {
		return nil, fmt.Errorf("%w: no metadata, offsets, commits, state or %s files", ErrNotCheckpoint, CkgateDir)
	}
	in := newInspector(st, o, idx)
	if err := in.readLogs(ctx); err != nil {
		return nil, err
	}
	in.decideStatus()
	in.buildBatches()
	in.buildSources()
	if err := in.analyseState(ctx); err != nil {
		return nil, err
	}
	if o.Sink != nil {
		if err := in.inspectSink(ctx); err != nil {
			return nil, err
		}
	}
	in.describeResume()
	if o.VerifyAllChecksums {
		if err := in.verifyRemaining(ctx); err != nil {
			return nil, err
		}
	}
	in.listingFindings()
	if err := in.nonRegularFindings(ctx); err != nil {
		return nil, err
	}
	for i := range in.findings {
		if in.findings[i].Next == "" {
			in.findings[i].Next = nextStep(in.findings[i])
		}
	}
	in.r.Findings = sortFindings(in.findings)
	if in.r.Findings == nil {
		in.r.Findings = []Finding{} // "findings": [] in JSON, never null
	}
	return in.r, nil
}

// inspector holds the state of one Inspect call.
type inspector struct {
	st  gateway.Store
	o   Options
	idx *index
	r   *Report

	L, C     int64 // latest offsets / commit batch, -1 when none
	detail   []int64
	minOff   int64
	required int64 // state version a restart loads

	mu         sync.Mutex
	findings   []Finding
	flagged    map[string]bool // keys that already have a finding about their content
	verified   map[string]bool
	offs       map[int64]*OffsetSeq
	offErr     map[int64]error
	commits    map[int64]*CommitMetadata
	commitErr  map[int64]error
	metaErr    error
	opMeta     map[string]*OperatorMetadata
	schemas    map[string]map[string]*StateSchema
	sourceInfo map[string]*SourceLogInfo
}

func newInspector(st gateway.Store, o Options, idx *index) *inspector {
	in := &inspector{
		st: st, o: o, idx: idx, L: -1, C: -1,
		flagged: map[string]bool{}, verified: map[string]bool{},
		offs: map[int64]*OffsetSeq{}, offErr: map[int64]error{},
		commits: map[int64]*CommitMetadata{}, commitErr: map[int64]error{},
		opMeta: map[string]*OperatorMetadata{}, schemas: map[string]map[string]*StateSchema{},
		sourceInfo: map[string]*SourceLogInfo{},
		r: &Report{
			Writer: Writer{Kind: WriterSpark}, Confs: map[string]string{},
			Batches: []Batch{}, Sources: []Source{}, Operators: []Operator{}, Findings: []Finding{},
			TotalBytes: idx.total, Files: idx.count,
			Format: Format{CheckpointFormat: 1},
		},
	}
	if idx.ckgate > 0 {
		in.r.Writer.Kind = WriterCkgate
	}
	in.r.Writer.Plan = idx.plan != nil
	offIDs := sortedIDs(idx.offsets)
	if n := len(offIDs); n > 0 {
		in.L, in.minOff = offIDs[n-1], offIDs[0]
	}
	if cs := sortedIDs(idx.commits); len(cs) > 0 {
		in.C = cs[len(cs)-1]
	}
	in.detail = in.detailBatches(offIDs)
	return in
}

// detailBatches picks the batches to detail: Options.Batch, or the latest
// MaxBatches batches that have offsets or commits.
func (in *inspector) detailBatches(offIDs []int64) []int64 {
	if in.o.Batch != nil {
		return []int64{*in.o.Batch}
	}
	if in.o.MaxBatches < 0 {
		return nil
	}
	all := append(slices.Clone(offIDs), sortedIDs(in.idx.commits)...)
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) > in.o.MaxBatches {
		all = all[len(all)-in.o.MaxBatches:]
	}
	return all
}

func (in *inspector) add(f Finding) {
	in.mu.Lock()
	in.findings = append(in.findings, f)
	in.mu.Unlock()
}

// fail records a finding about the content of e (reading or decoding it
// failed). A zero-byte file is reported as such.
func (in *inspector) fail(e *entry, sev Severity, what string, err error) {
	f := findingForError(e.Key, sev, what, err)
	if e.Size == 0 {
		f = Finding{ID: FindingZeroByte, Severity: sev, Key: e.Key, Message: what + " is empty (0 bytes)"}
	}
	switch f.ID {
	case FindingZeroByte, FindingTruncated:
		f.Message += " — a write or copy was cut short, or the file was damaged"
	case FindingUnsupportedVersion:
		f.Message += " — a newer Spark or ckgate wrote it"
	}
	if sev == SeverityError {
		f.Message += "; a restart reads this file, so it would fail"
	}
	in.mu.Lock()
	in.flagged[e.Key] = true
	in.findings = append(in.findings, f)
	in.mu.Unlock()
}

// fetch reads e (at most limit bytes) and verifies its checksum sidecars.
// An error means the content is unusable; ctx errors must stop Inspect.
func (in *inspector) fetch(ctx context.Context, e *entry, sev Severity, limit int64) ([]byte, error) {
	if e.Size > limit {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, e.Size)
	}
	data, _, err := gateway.GetBounded(ctx, in.st, e.Key, limit)
	if err != nil {
		return nil, err
	}
	res, err := in.verifyChecksums(ctx, e, data)
	if err != nil {
		return nil, err
	}
	in.reportChecksums(e.Key, sev, res)
	return data, nil
}

// checksumResult is what the sidecars of a file say about it.
type checksumResult struct {
	// hadoop: the file does not match its Hadoop .crc sidecar. Spark's own
	// golden checkpoints carry stale ones (files edited by hand) and still
	// restart, so this is a warning.
	hadoop error
	// spark: the file does not match Spark 4.1's checksum file, which Spark
	// verifies when it reads a state file.
	spark error
}

// verifyChecksums checks data against the Hadoop and Spark sidecars of e,
// if any were listed. Only a ctx error is returned; a broken sidecar is a
// finding.
func (in *inspector) verifyChecksums(ctx context.Context, e *entry, data []byte) (res checksumResult, fatal error) {
	in.mu.Lock()
	in.verified[e.Key] = true
	in.mu.Unlock()
	if sc := in.idx.hadoopCRC[e.Key]; sc != nil {
		raw, _, err := gateway.GetBounded(ctx, in.st, sc.Key, 0)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			in.add(findingForError(sc.Key, SeverityWarning, "checksum sidecar", err))
		} else if c, err := DecodeHadoopCRC(raw); err != nil {
			in.add(findingForError(sc.Key, SeverityWarning, "checksum sidecar", err))
		} else if err := c.Verify(data); err != nil {
			res.hadoop = fmt.Errorf("does not match its Hadoop checksum %s: %w", sc.Key, err)
		}
	}
	if sc := in.idx.jsonCRC[e.Key]; sc != nil {
		raw, _, err := gateway.GetBounded(ctx, in.st, sc.Key, 0)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			in.add(findingForError(sc.Key, SeverityWarning, "file checksum", err))
		} else if c, err := DecodeFileChecksum(raw); err != nil {
			in.add(findingForError(sc.Key, SeverityWarning, "file checksum", err))
		} else if err := c.Verify(data); err != nil {
			res.spark = fmt.Errorf("does not match its checksum file %s: %w", sc.Key, err)
		}
	}
	return res, nil
}

// report adds the findings of a checksum result; sev applies to Spark's
// checksum files (Hadoop sidecars are warnings).
func (in *inspector) reportChecksums(key string, sev Severity, res checksumResult) {
	if res.hadoop != nil {
		in.add(mismatchFinding(key, SeverityWarning, res.hadoop))
	}
	if res.spark != nil {
		in.add(mismatchFinding(key, sev, res.spark))
	}
}

// mismatchFinding reports a file that does not match its sidecar.
func mismatchFinding(key string, sev Severity, err error) Finding {
	return Finding{ID: FindingChecksumMismatch, Severity: sev, Key: key, Message: err.Error()}
}

// readTask returns a task that fetches e, decodes it with decode and
// records a finding on failure.
func (in *inspector) readTask(e *entry, sev Severity, what string, decode func([]byte) error) func(context.Context) error {
	return func(ctx context.Context) error {
		data, err := in.fetch(ctx, e, sev, maxLogBytes)
		if err == nil {
			err = decode(data)
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			in.fail(e, sev, what, err)
		}
		return nil
	}
}

// readLogs reads everything but state files, in parallel.
func (in *inspector) readLogs(ctx context.Context) error {
	x := in.idx
	var tasks []func(context.Context) error
	if x.metadata != nil {
		tasks = append(tasks, in.readTask(x.metadata, SeverityError, "query metadata", func(b []byte) error {
			m, err := DecodeStreamMetadata(b)
			in.mu.Lock()
			defer in.mu.Unlock()
			if err != nil {
				in.metaErr = err
				return err
			}
			in.r.QueryID = m.ID
			return nil
		}))
	}
	if x.writer != nil {
		tasks = append(tasks, in.readTask(x.writer, SeverityError, "writer record", in.decodeWriter))
	}
	if x.plan != nil {
		// ckgate's engine refuses to restart without a readable plan
		tasks = append(tasks, in.readTask(x.plan, SeverityError, "plan", in.decodePlan))
	}
	offsets := slices.Clone(in.detail)
	if in.L >= 0 {
		offsets = append(offsets, in.L, in.L-1)
	}
	slices.Sort(offsets)
	for _, b := range slices.Compact(offsets) {
		e := x.offsets[b]
		if e == nil {
			continue
		}
		sev := SeverityWarning
		if b == in.L || b == in.L-1 {
			sev = SeverityError
		}
		tasks = append(tasks, in.readTask(e, sev, "offsets entry", func(data []byte) error {
			seq, err := DecodeOffsetSeq(data)
			in.mu.Lock()
			defer in.mu.Unlock()
			if err != nil {
				in.offErr[b] = err
				return err
			}
			in.offs[b] = seq
			return nil
		}))
	}
	commits := slices.Clone(in.detail)
	if in.C >= 0 {
		commits = append(commits, in.C)
	}
	slices.Sort(commits)
	for _, b := range slices.Compact(commits) {
		e := x.commits[b]
		if e == nil {
			continue
		}
		sev := SeverityWarning
		if b == in.C {
			sev = SeverityError
		}
		tasks = append(tasks, in.readTask(e, sev, "commit entry", func(data []byte) error {
			c, err := DecodeCommit(data)
			in.mu.Lock()
			defer in.mu.Unlock()
			if err != nil {
				in.commitErr[b] = err
				return err
			}
			in.commits[b] = c
			return nil
		}))
	}
	for _, op := range x.ops {
		tasks = append(tasks, in.operatorTasks(op)...)
	}
	for _, s := range x.sources {
		if e := s.files[s.latest]; e != nil {
			// a restart reads the source log (a file source: every entry
			// since the last compaction; Kafka: its initial offsets)
			tasks = append(tasks, in.readTask(e, SeverityError, "source log", func(data []byte) error {
				info, err := ClassifySourceLogFile(data)
				in.mu.Lock()
				in.sourceInfo[s.id] = &info
				in.mu.Unlock()
				return err
			}))
		}
	}
	return runAll(ctx, in.o.Concurrency, tasks)
}

// operatorTasks reads an operator's metadata (v1, and the latest v2) and
// its stores' schema files.
func (in *inspector) operatorTasks(op *opIdx) []func(context.Context) error {
	var tasks []func(context.Context) error
	setMeta := func(data []byte) error {
		m, err := DecodeOperatorMetadata(data)
		if err != nil {
			return err
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		if cur := in.opMeta[op.id]; cur == nil || m.Version >= cur.Version {
			in.opMeta[op.id] = m
		}
		return nil
	}
	if op.metaV1 != nil {
		tasks = append(tasks, in.readTask(op.metaV1, SeverityError, "operator metadata", setMeta))
	}
	if ids := sortedIDs(op.metaV2); len(ids) > 0 {
		tasks = append(tasks, in.readTask(op.metaV2[ids[len(ids)-1]], SeverityError, "operator metadata", setMeta))
	}
	setSchema := func(store string) func([]byte) error {
		return func(data []byte) error {
			s, err := DecodeStateSchema(data)
			if err != nil {
				return err
			}
			in.mu.Lock()
			defer in.mu.Unlock()
			if in.schemas[op.id] == nil {
				in.schemas[op.id] = map[string]*StateSchema{}
			}
			if cur := in.schemas[op.id][store]; cur == nil || s.Version >= cur.Version {
				in.schemas[op.id][store] = s
			}
			return nil
		}
	}
	for name, st := range op.stores {
		if st.schema != nil {
			tasks = append(tasks, in.readTask(st.schema, SeverityError, "state schema", setSchema(name)))
		}
	}
	for name, files := range op.schemaV3 {
		latest := slices.MaxFunc(files, func(a, b *entry) int {
			if a.batch != b.batch {
				return cmp.Compare(a.batch, b.batch)
			}
			return compareNumeric(a.Key, b.Key)
		})
		tasks = append(tasks, in.readTask(latest, SeverityError, "state schema", setSchema(name)))
	}
	return tasks
}

func (in *inspector) decodeWriter(data []byte) error {
	rec, err := gateway.ParseWriterRecord(data)
	if err != nil {
		return corruptf("%v", err)
	}
	now := in.o.Now()
	in.mu.Lock()
	defer in.mu.Unlock()
	w := &in.r.Writer
	w.Kind = WriterCkgate
	w.Epoch, w.Owner, w.Principal, w.Released = rec.Epoch, rec.Owner, rec.Principal, rec.Released
	since, hb := rec.Since, rec.Heartbeat
	w.Since, w.Heartbeat = &since, &hb
	w.Live = rec.Live(now)
	if w.Live {
		in.findings = append(in.findings, Finding{ID: FindingWriterLive, Severity: SeverityInfo, Key: gateway.WriterKey,
			Message: fmt.Sprintf("writer epoch %d (%s) holds the checkpoint: last heartbeat %s, lease %s",
				rec.Epoch, rec.Owner, rec.Heartbeat.UTC().Format("2006-01-02T15:04:05Z"), rec.Lease())})
	}
	return nil
}

// decodePlan reads _ckgate/plan.json with DecodePlan, the reader run and
// compat use, so a plan a restart would refuse (no version, version 0, a
// newer version) is a finding here too; the report shows a few fields.
func (in *inspector) decodePlan(data []byte) error {
	p, err := DecodePlan(data)
	if err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.r.Writer.Plan = true
	in.r.Writer.PlanFingerprint = p.Fingerprint
	in.r.Writer.SinkKind = p.Sink["kind"]
	return nil
}
