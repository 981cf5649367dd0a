package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ckgate/ckgate/engine/compat"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

// proposeDeltaIDs gives each Delta source of the proposal the id of the
// table it will read (--delta): the table at the location now, whatever
// the proposal says, so that compat compares it with the reservoirId the
// checkpoint recorded. A catalog-managed table's id cannot be told from
// storage: a note says so.
func (e *env) proposeDeltaIDs(ctx context.Context, open func(context.Context, string) (gateway.Store, error), rec *compat.Recorded, prop *compat.Plan, tables lifecycle.DeltaTables) error {
	for i, rs := range rec.Sources {
		if rs.Kind != "delta" || i >= len(prop.Sources) {
			continue
		}
		url := tables.For(strconv.Itoa(i))
		if url == "" {
			continue
		}
		t, closeFn, err := lifecycle.OpenDeltaTable(ctx, open, url)
		if err != nil {
			return err
		}
		snap, err := t.Snapshot(ctx, -1)
		closeFn()
		if errors.Is(err, delta.ErrCatalogManaged) {
			rec.Notes = append(rec.Notes, fmt.Sprintf("source %d: %v: its table id is not checked", i, err))
			continue
		}
		if err != nil {
			return fmt.Errorf("Delta table %s: %w", gateway.Redact(url), err)
		}
		p := &prop.Sources[i]
		if p.TableID != "" && p.TableID != snap.Metadata.ID {
			rec.Notes = append(rec.Notes, fmt.Sprintf("source %d: the proposal names table id %s; the table at %s has id %s (compared)", i, p.TableID, gateway.Redact(url), snap.Metadata.ID))
		}
		if p.Kind == "" {
			p.Kind = "delta"
		}
		p.TableID = snap.Metadata.ID
	}
	return nil
}
