package lifecycle

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
)

// Gap statuses of one Kafka partition or one file.
const (
	GapOK              = "ok"
	GapExpired         = "gap"
	GapAhead           = "ahead"
	GapIdentityChanged = "identity-changed"
	GapMissing         = "missing"
	GapNew             = "new"
)

// ErrNoBrokers: the checkpoint reads Kafka and no brokers were given.
var ErrNoBrokers = errors.New("the checkpoint reads Kafka: brokers needed")

// GapOptions configure Gap.
type GapOptions struct {
	// Brokers are the Kafka seed brokers; needed when a source is Kafka.
	Brokers []string
	// Kafka, when set, is used instead of a client built from Brokers.
	Kafka *kgo.Client
	// Open opens a file source's directory by URL (default stores.Open).
	Open func(ctx context.Context, raw string) (gateway.Store, error)
	// Delta and Iceberg locate the tables the sources read (see
	// TableLocations).
	Delta   TableLocations
	Iceberg TableLocations
}

// GapReport says, per source, whether the checkpoint can resume.
type GapReport struct {
	QueryID string            `json:"query_id"`
	Status  checkpoint.Status `json:"status"`
	// ResumeFrom is the committed batch whose end offsets a restart starts
	// from (nil: none committed, the initial offsets).
	ResumeFrom *int64 `json:"resume_from_batch"`
	// InFlight is the latest offsets batch when it is not committed: it is
	// re-read from the resume offsets up to its own end offsets.
	InFlight *int64      `json:"in_flight_batch,omitempty"`
	Sources  []SourceGap `json:"sources"`
	// Problems counts partitions and files that are not ok (gap, ahead,
	// identity-changed, missing).
	Problems int `json:"problems"`
	// Archived is the fresh-start marker when the root was archived (a
	// query must not resume from it; see Archive).
	Archived *ArchivedRecord `json:"archived,omitempty"`
}

// OK reports whether every source can replay what the checkpoint needs.
func (r *GapReport) OK() bool { return r.Problems == 0 }

// SourceGap is one source of the query.
type SourceGap struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // kafka, files, or the offset kind when not checked
	// Identity is what the plan recorded ({kind, cluster_id, topic,
	// topic_id} or {kind, path}); nil for a Spark checkpoint.
	Identity map[string]string `json:"identity,omitempty"`
	Checked  bool              `json:"checked"`
	Note     string            `json:"note,omitempty"`
	// Kafka
	ClusterID  string         `json:"cluster_id,omitempty"`
	Partitions []PartitionGap `json:"partitions,omitempty"`
	Files      *FilesGap      `json:"files,omitempty"`
	// Delta: the table location checked and the verdict (gap_delta.go).
	Table   string              `json:"table,omitempty"`
	Delta   *delta.ResumeReport `json:"delta,omitempty"`
	Iceberg *IcebergGap         `json:"iceberg,omitempty"`
}

// PartitionGap is one Kafka partition.
type PartitionGap struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Status    string `json:"status"`
	// Problems lists every status that applies (Status is the first).
	Problems []string `json:"problems,omitempty"`
	// Resume is the offset a restart reads from; Until the end offset of
	// the in-flight batch, when there is one.
	Resume int64  `json:"resume"`
	Until  *int64 `json:"until,omitempty"`
	// Start and End are the partition's earliest and next offsets now
	// (-1 when missing).
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Expired counts records deleted between Resume and Start; Ahead how far
	// the checkpoint's offset is beyond End.
	Expired int64  `json:"expired,omitempty"`
	Ahead   int64  `json:"ahead,omitempty"`
	TopicID string `json:"topic_id,omitempty"`
}

// FilesGap is a file source: the files a restart still reads.
type FilesGap struct {
	// Committed is the file log offset of the latest committed batch.
	Committed int64 `json:"committed_log_offset"`
	// Needed counts the files recorded for in-flight or later batches.
	Needed  int       `json:"needed"`
	Missing []FileGap `json:"missing"`
}

// FileGap is one recorded file that no longer exists.
type FileGap struct {
	Path     string `json:"path"`
	LogBatch int64  `json:"log_batch"`
	// Use: "in-flight" (batch InFlight re-reads it) or "pending" (recorded,
	// not yet in a batch).
	Use string `json:"use"`
}

// Gap reads the checkpoint held by st and checks its sources (see the
// package documentation). A location without a checkpoint is
// checkpoint.ErrNotCheckpoint; a Kafka source without brokers is
// ErrNoBrokers.
func Gap(ctx context.Context, st gateway.Store, opts GapOptions) (*GapReport, error) {
	rep, err := checkpoint.Inspect(ctx, st, checkpoint.Options{MaxBatches: -1, MaxStateVersions: -1})
	if err != nil {
		return nil, err
	}
	out := &GapReport{QueryID: rep.QueryID, Status: rep.Status, ResumeFrom: rep.LatestCommitBatch, Sources: []SourceGap{}}
	if rep.LatestOffsetsBatch != nil && (rep.LatestCommitBatch == nil || *rep.LatestOffsetsBatch > *rep.LatestCommitBatch) {
		out.InFlight = rep.LatestOffsetsBatch
	}
	var resume, until *checkpoint.OffsetSeq
	if c := rep.LatestCommitBatch; c != nil {
		if resume, err = checkpoint.ReadOffsets(ctx, st, *c); err != nil {
			return nil, fmt.Errorf("resume offsets: %w", err)
		}
	}
	if out.InFlight != nil {
		if until, err = checkpoint.ReadOffsets(ctx, st, *out.InFlight); err != nil {
			return nil, fmt.Errorf("in-flight offsets: %w", err)
		}
	}
	plan, err := readPlanSource(ctx, st)
	if err != nil {
		return nil, err
	}
	if rec, err := CheckNotArchived(ctx, st); rec != nil {
		out.Archived = rec
	} else if err != nil {
		return nil, err
	}
	g := &gapper{st: st, opts: opts, plan: plan, out: out}
	defer g.close()
	for i, src := range rep.Sources {
		sg, err := g.source(ctx, i, src, entry(resume, i), entry(until, i))
		if err != nil {
			return nil, err
		}
		out.Sources = append(out.Sources, sg)
	}
	if len(rep.Sources) == 0 && plan != nil && plan["kind"] != "" {
		out.Sources = append(out.Sources, SourceGap{ID: "0", Kind: plan["kind"], Identity: plan, Note: "no batch yet: nothing to resume"})
	}
	for _, s := range out.Sources {
		for _, p := range s.Partitions {
			if p.Status != GapOK && p.Status != GapNew {
				out.Problems++
			}
		}
		if s.Files != nil {
			out.Problems += len(s.Files.Missing)
		}
		if s.Delta != nil && !s.Delta.OK() {
			out.Problems++
		}
		if s.Iceberg != nil && s.Iceberg.Status != GapOK {
			out.Problems++
		}
	}
	return out, nil
}

func entry(s *checkpoint.OffsetSeq, i int) *checkpoint.SourceOffset {
	if s == nil || i >= len(s.Sources) {
		return nil
	}
	o := checkpoint.ParseSourceOffset(s.Sources[i])
	return &o
}

// readPlanSource returns the source identity of _ckgate/plan.json (nil
// when there is no plan).
func readPlanSource(ctx context.Context, st gateway.Store) (map[string]string, error) {
	p, err := checkpoint.ReadPlan(ctx, st)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if p.Source == nil {
		return map[string]string{}, nil
	}
	return p.Source, nil
}

type gapper struct {
	st    gateway.Store
	opts  GapOptions
	plan  map[string]string
	out   *GapReport
	cl    *kgo.Client
	owned bool
}

func (g *gapper) close() {
	if g.owned && g.cl != nil {
		g.cl.Close()
	}
}

func (g *gapper) source(ctx context.Context, i int, src checkpoint.Source, resume, until *checkpoint.SourceOffset) (SourceGap, error) {
	sg := SourceGap{ID: src.ID, Kind: src.Kind, Identity: g.plan}
	if g.plan == nil {
		sg.Note = "no _ckgate/plan.json (a Spark checkpoint): the source identity is unknown"
	}
	switch {
	case src.Offset != nil && src.Offset.Kind == checkpoint.OffsetKafka,
		src.Log != nil && src.Log.Kind == checkpoint.SourceLogKafkaInitial:
		sg.Kind = "kafka"
		return sg, g.kafka(ctx, i, &sg, resume, until)
	case src.Log != nil && src.Log.Kind == checkpoint.SourceLogFile,
		src.Offset != nil && src.Offset.Kind == checkpoint.OffsetFile:
		sg.Kind = "files"
		return sg, g.files(ctx, src, &sg, resume, until)
	case src.Offset != nil && src.Offset.Kind == checkpoint.OffsetDelta:
		sg.Kind = "delta"
		return sg, g.delta(ctx, src, &sg, resume, until)
	case src.Offset != nil && src.Offset.Kind == checkpoint.OffsetIceberg:
		sg.Kind = "iceberg"
		return sg, g.iceberg(ctx, src, &sg, resume, until)
	}
	sg.Note = strings.TrimPrefix(sg.Note+"; ", "; ") + "not checked: only Kafka and file sources can expire input"
	return sg, nil
}

// kafkaOffsets returns the offsets of a source entry, or the initial
// offsets in sources/<i>/0 when o is nil or has none.
func (g *gapper) kafkaOffsets(ctx context.Context, i int, o *checkpoint.SourceOffset) (map[string]map[int32]int64, error) {
	if o != nil && o.Kind == checkpoint.OffsetKafka {
		return checkpoint.DecodeKafkaOffsets(o.JSON)
	}
	key := checkpoint.SourceLogKey(i, 0, false)
	data, _, err := gateway.GetBounded(ctx, g.st, key, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	m, err := checkpoint.DecodeKafkaInitialOffsets(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}

func (g *gapper) kafka(ctx context.Context, i int, sg *SourceGap, resume, until *checkpoint.SourceOffset) error {
	from, err := g.kafkaOffsets(ctx, i, resume)
	if err != nil {
		return err
	}
	var to map[string]map[int32]int64
	if until != nil && until.Kind == checkpoint.OffsetKafka {
		if to, err = checkpoint.DecodeKafkaOffsets(until.JSON); err != nil {
			return err
		}
	}
	topics := map[string]bool{}
	for t := range from {
		topics[t] = true
	}
	for t := range to {
		topics[t] = true
	}
	if len(topics) == 0 {
		sg.Note = strings.TrimPrefix(sg.Note+"; ", "; ") + "no Kafka offsets recorded yet"
		return nil
	}
	if g.cl == nil {
		if g.opts.Kafka != nil {
			g.cl = g.opts.Kafka
		} else {
			if len(g.opts.Brokers) == 0 {
				return ErrNoBrokers
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(g.opts.Brokers...), kgo.DisableClientMetrics())
			if err != nil {
				return fmt.Errorf("kafka client: %w", err)
			}
			g.cl, g.owned = cl, true
		}
	}
	adm := kadm.NewClient(g.cl)
	names := slices.Sorted(maps.Keys(topics))
	md, err := adm.Metadata(ctx, names...)
	if err != nil {
		return fmt.Errorf("kafka metadata: %w", err)
	}
	sg.ClusterID = md.Cluster
	sg.Checked = true
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("kafka start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("kafka end offsets: %w", err)
	}
	clusterChanged := g.plan != nil && g.plan["cluster_id"] != "" && md.Cluster != "" && g.plan["cluster_id"] != md.Cluster
	if clusterChanged {
		sg.Note = strings.TrimPrefix(sg.Note+"; ", "; ") + fmt.Sprintf("cluster id %s differs from the plan's %s", md.Cluster, g.plan["cluster_id"])
	}
	for _, t := range names {
		td, ok := md.Topics[t]
		exists := ok && td.Err == nil
		if ok && td.Err != nil && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("kafka topic %s: %w", t, td.Err)
		}
		id := ""
		if exists {
			id = hex.EncodeToString(td.ID[:])
		}
		idChanged := clusterChanged || exists && g.plan != nil && g.plan["topic"] == t && g.plan["topic_id"] != "" && g.plan["topic_id"] != id
		parts := map[int32]bool{}
		for p := range from[t] {
			parts[p] = true
		}
		for p := range to[t] {
			parts[p] = true
		}
		for _, p := range slices.Sorted(maps.Keys(parts)) {
			pg := PartitionGap{Topic: t, Partition: p, Start: -1, End: -1, TopicID: id}
			r, hasFrom := from[t][p]
			if u, ok := to[t][p]; ok {
				pg.Until = &u
				if !hasFrom {
					r = 0 // a partition new in the in-flight batch: read from its start
					hasFrom = true
				}
			}
			pg.Resume = r
			_, partOK := td.Partitions[p]
			if !exists || !partOK {
				pg.Problems = append(pg.Problems, GapMissing)
			} else {
				so, okS := starts.Lookup(t, p)
				eo, okE := ends.Lookup(t, p)
				if okS && so.Err != nil || okE && eo.Err != nil || !okS || !okE {
					pg.Problems = append(pg.Problems, GapMissing)
				} else {
					pg.Start, pg.End = so.Offset, eo.Offset
					if idChanged {
						pg.Problems = append(pg.Problems, GapIdentityChanged)
					}
					top := r
					if pg.Until != nil && *pg.Until > top {
						top = *pg.Until
					}
					if top > pg.End {
						pg.Ahead = top - pg.End
						pg.Problems = append(pg.Problems, GapAhead)
					}
					if r < pg.Start {
						pg.Expired = pg.Start - r
						pg.Problems = append(pg.Problems, GapExpired)
					}
				}
			}
			pg.Status = GapOK
			if len(pg.Problems) > 0 {
				pg.Status = pg.Problems[0]
			}
			sg.Partitions = append(sg.Partitions, pg)
		}
		if exists {
			for _, p := range slices.Sorted(maps.Keys(td.Partitions)) {
				if !parts[p] {
					pg := PartitionGap{Topic: t, Partition: p, Status: GapNew, Start: -1, End: -1, TopicID: id}
					if so, ok := starts.Lookup(t, p); ok && so.Err == nil {
						pg.Start, pg.Resume = so.Offset, so.Offset
					}
					if eo, ok := ends.Lookup(t, p); ok && eo.Err == nil {
						pg.End = eo.Offset
					}
					sg.Partitions = append(sg.Partitions, pg)
				}
			}
		}
	}
	return nil
}

// logOffset reads a file source's log offset ({"logOffset":N} or a long).
func logOffset(o *checkpoint.SourceOffset) (int64, bool) {
	if o == nil {
		return -1, false
	}
	switch {
	case o.LogOffset != nil:
		return *o.LogOffset, true
	case o.Value != nil:
		return *o.Value, true
	}
	return -1, false
}

func (g *gapper) files(ctx context.Context, src checkpoint.Source, sg *SourceGap, resume, until *checkpoint.SourceOffset) error {
	dir := checkpoint.SourcesDir + "/" + src.ID
	if src.Log != nil && src.Log.Dir != "" {
		dir = src.Log.Dir
	}
	entries, _, err := checkpoint.ReadFileSourceLog(ctx, g.st, dir)
	if err != nil && !errors.Is(err, gateway.ErrNotFound) && !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return fmt.Errorf("file source log %s: %w", dir, err)
	}
	committed, _ := logOffset(resume)
	inflight, hasInflight := logOffset(until)
	fg := &FilesGap{Committed: committed, Missing: []FileGap{}}
	sg.Files = fg
	sg.Checked = true
	open := g.opts.Open
	if open == nil {
		open = stores.Open
	}
	dirs := map[string]gateway.Store{}
	defer func() {
		for _, s := range dirs {
			gateway.Close(s)
		}
	}()
	for _, e := range entries {
		if e.BatchID <= committed {
			continue
		}
		fg.Needed++
		use := "pending"
		if hasInflight && e.BatchID <= inflight {
			use = "in-flight"
		}
		i := strings.LastIndex(e.Path, "/")
		if i < 0 {
			return fmt.Errorf("file source log %s: recorded path %q has no directory", dir, e.Path)
		}
		d, name := e.Path[:i], e.Path[i+1:]
		s, ok := dirs[d]
		if !ok {
			if s, err = open(ctx, d); err != nil {
				return fmt.Errorf("open input directory %s: %w", gateway.Redact(d), err)
			}
			dirs[d] = s
		}
		if _, err := s.Stat(ctx, name); errors.Is(err, gateway.ErrNotFound) {
			fg.Missing = append(fg.Missing, FileGap{Path: e.Path, LogBatch: e.BatchID, Use: use})
		} else if err != nil {
			return fmt.Errorf("input %s: %w", gateway.Redact(e.Path), err)
		}
	}
	return nil
}
