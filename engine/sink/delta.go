package sink

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// deltaSink is the Delta sink: batch N's rows go to one parquet data file
// part-00000-<uuid>-c000.snappy.parquet at the table root (a fresh name
// per attempt; an attempt that crashes before its commit leaves a file no
// commit names, which readers never see), then delta.Writer commits it as
// the table's next version, create-only, with txn (query id, N): a batch
// the table's txn already holds is skipped, as in Spark's Delta sink.
//
// The table has one schema, set by the first commit from the rows of the
// first batch that has some (typed as inferColumns says, instants as
// timestamp); a later row whose fields do not fit it fails the batch,
// naming the field. Several queries may append to one table (their txn
// app ids differ), so the Delta sink has no single owner record.
type deltaSink struct {
	out   gateway.Store
	url   string
	times map[string]bool
	env   Env
	w     *delta.Writer
}

func newDelta(ctx context.Context, s *spec.Spec, env Env) (*deltaSink, error) {
	out, u, err := env.Open(ctx, s.Sink.Path)
	if err != nil {
		return nil, fmt.Errorf("sink.path %s: %w", s.Sink.Path, err)
	}
	d := &deltaSink{out: out, url: strings.TrimSuffix(u, "/"), times: TimeColumns(s), env: env}
	if d.w, err = delta.OpenWriter(ctx, out, env.QueryID, env.Now); err != nil {
		gateway.Close(out)
		return nil, fmt.Errorf("delta sink %s: %w", gateway.Redact(d.url), err)
	}
	if md := d.w.Metadata(); md != nil {
		if _, err := tableColumns(md); err != nil {
			gateway.Close(out)
			return nil, fmt.Errorf("delta sink %s: %w", gateway.Redact(d.url), err)
		}
	}
	return d, nil
}

func (d *deltaSink) Identity() map[string]string {
	return map[string]string{"kind": spec.SinkDelta, "path": d.url}
}

func (d *deltaSink) Close() error { return gateway.Close(d.out) }

// tableColumns are the columns of a table the sink appends to: no
// partition columns, types the sink writes.
func tableColumns(md *delta.Metadata) ([]Column, error) {
	if len(md.PartitionColumns) > 0 {
		return nil, fmt.Errorf("table %s is partitioned by %s; the ckgate Delta sink writes unpartitioned tables", md.ID, strings.Join(md.PartitionColumns, ", "))
	}
	if md.Format.Provider != "" && md.Format.Provider != "parquet" {
		return nil, fmt.Errorf("table %s stores %s files, not parquet", md.ID, md.Format.Provider)
	}
	return parseDeltaSchema(md.SchemaString)
}

// DeltaDataFileName is the name of a data file for one attempt (Spark's
// naming).
func DeltaDataFileName() string {
	return "part-00000-" + delta.NewUUID() + "-c000.snappy.parquet"
}

func (d *deltaSink) Commit(ctx context.Context, batch int64, rows []row.Row) (Result, error) {
	if d.w.TxnVersion() >= batch {
		return Result{Skipped: true}, nil
	}
	var create *delta.Metadata
	if d.w.Metadata() == nil {
		if len(rows) == 0 {
			// no table and no rows to type its columns: nothing to record
			// (the first batch with rows creates the table)
			return Result{}, nil
		}
		create = delta.NewMetadata(deltaSchemaString(inferColumns(rows, d.times)), d.env.Now())
	}
	var res Result
	prepare := func(ctx context.Context, md *delta.Metadata) ([]delta.Add, error) {
		res = Result{Rows: int64(len(rows))}
		if len(rows) == 0 {
			return nil, nil
		}
		cols, err := tableColumns(md)
		if err != nil {
			return nil, err
		}
		if err := fits(rows, cols); err != nil {
			return nil, fmt.Errorf("batch %d does not fit the table's schema: %w", batch, err)
		}
		data, err := encodeParquet(rows, cols)
		if err != nil {
			return nil, fmt.Errorf("batch %d: %w", batch, err)
		}
		name := DeltaDataFileName()
		if _, err := d.out.Put(ctx, name, data, gateway.IfAbsent()); err != nil {
			return nil, err
		}
		res.Bytes, res.Files = int64(len(data)), []string{name}
		return []delta.Add{{Path: url.PathEscape(name), PartitionValues: map[string]string{}, Size: int64(len(data)),
			ModificationTime: d.env.Now().UnixMilli(), DataChange: true, Stats: fmt.Sprintf(`{"numRecords":%d}`, len(rows))}}, nil
	}
	ar, err := d.w.Append(ctx, batch, create, prepare)
	if err != nil {
		return Result{}, fmt.Errorf("delta sink %s: batch %d: %w", gateway.Redact(d.url), batch, err)
	}
	if ar.Skipped {
		return Result{Skipped: true}, nil
	}
	return res, nil
}
