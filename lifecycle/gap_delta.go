package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
)

// ErrNoDeltaTable: the checkpoint reads a Delta table and no table
// location was given for that source (a Delta offset records the table's
// id, not its path).
var ErrNoDeltaTable = errors.New("the checkpoint reads a Delta table: its location is needed")

// TableLocations maps a source id ("0", "1", …) to the location of the
// table it reads; the key "" is used for any source without its own.
type TableLocations map[string]string

// DeltaTables are the locations of the Delta tables the sources read.
type DeltaTables = TableLocations

// For returns the location for source id ("" when none).
func (d TableLocations) For(id string) string {
	if u, ok := d[id]; ok {
		return u
	}
	return d[""]
}

// deltaPosition is where a restart's Delta source resumes: the end offset
// of the latest committed batch; with none committed, the in-flight batch
// re-reads from the start of the version its end offset is in.
func deltaPosition(resume, until *checkpoint.SourceOffset) (delta.Position, bool) {
	if resume != nil && resume.Delta != nil {
		o := resume.Delta
		return delta.Position{TableID: o.ReservoirID, Version: o.ReservoirVersion, Index: o.Index, IsStartingVersion: o.IsStartingVersion}, true
	}
	if until != nil && until.Delta != nil {
		o := until.Delta
		return delta.Position{TableID: o.ReservoirID, Version: o.ReservoirVersion, Index: -1, IsStartingVersion: o.IsStartingVersion}, true
	}
	return delta.Position{}, false
}

func (g *gapper) delta(ctx context.Context, src checkpoint.Source, sg *SourceGap, resume, until *checkpoint.SourceOffset) error {
	p, ok := deltaPosition(resume, until)
	if !ok {
		sg.Note = strings.TrimPrefix(sg.Note+"; ", "; ") + "no Delta offset recorded yet"
		return nil
	}
	url := g.opts.Delta.For(src.ID)
	if url == "" {
		return fmt.Errorf("%w (source %s, table id %s)", ErrNoDeltaTable, src.ID, p.TableID)
	}
	r, err := CheckDeltaResume(ctx, g.opts.Open, url, p)
	if err != nil {
		return fmt.Errorf("source %s: %w", src.ID, err)
	}
	if r.Status == delta.ResumeOK && until != nil && until.Delta != nil && until.Delta.ReservoirVersion > r.LatestVersion+1 {
		r.Status = delta.ResumeAhead
		r.Reason = fmt.Sprintf("the in-flight batch ends at version %d; the table's latest version is %d", until.Delta.ReservoirVersion, r.LatestVersion)
	}
	sg.Checked, sg.Delta, sg.Table = true, r, gateway.Redact(url)
	return nil
}

// CheckDeltaResume opens the Delta table at url (with open, or stores.Open
// when nil) and checks that a stream at p can resume on it (see
// delta.Table.CheckResume). Errors name the table location (redacted).
func CheckDeltaResume(ctx context.Context, open func(context.Context, string) (gateway.Store, error), url string, p delta.Position) (*delta.ResumeReport, error) {
	t, closeFn, err := OpenDeltaTable(ctx, open, url)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	r, err := t.CheckResume(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("Delta table %s: %w", gateway.Redact(url), err)
	}
	return r, nil
}

// OpenDeltaTable opens the Delta table at url; the caller calls the
// returned function to release the store.
func OpenDeltaTable(ctx context.Context, open func(context.Context, string) (gateway.Store, error), url string) (*delta.Table, func(), error) {
	if open == nil {
		open = stores.Open
	}
	s, err := open(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("Delta table %s: %w", gateway.Redact(url), err)
	}
	t, err := delta.Open(ctx, s, url)
	if err != nil {
		gateway.Close(s)
		return nil, nil, fmt.Errorf("Delta table %s: %w", gateway.Redact(url), err)
	}
	return t, func() { gateway.Close(s) }, nil
}

// ErrNoIcebergTable: the checkpoint reads an Iceberg table and no table
// location was given for that source.
var ErrNoIcebergTable = errors.New("the checkpoint reads an Iceberg table: its location is needed")

func (g *gapper) iceberg(ctx context.Context, src checkpoint.Source, sg *SourceGap, resume, until *checkpoint.SourceOffset) error {
	o := resume
	if o == nil || o.Iceberg == nil {
		o = until
	}
	if o == nil || o.Iceberg == nil {
		sg.Note = strings.TrimPrefix(sg.Note+"; ", "; ") + "no Iceberg offset recorded yet"
		return nil
	}
	url := g.opts.Iceberg.For(src.ID)
	if url == "" {
		return fmt.Errorf("%w (source %s)", ErrNoIcebergTable, src.ID)
	}
	open := g.opts.Open
	if open == nil {
		open = stores.Open
	}
	s, err := open(ctx, url)
	if err != nil {
		return fmt.Errorf("Iceberg table %s: %w", gateway.Redact(url), err)
	}
	defer gateway.Close(s)
	m, err := ReadIcebergMetadata(ctx, s)
	if err != nil {
		return fmt.Errorf("Iceberg table %s: %w", gateway.Redact(url), err)
	}
	sg.Checked, sg.Table, sg.Iceberg = true, gateway.Redact(url), CheckIcebergResume(m, *o.Iceberg)
	return nil
}
