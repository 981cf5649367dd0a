package delta

import (
	"context"
	"fmt"
)

// AddedFile is a data file added at a version.
type AddedFile struct {
	Version int64
	Add     Add
}

// AddedFrom returns the add actions with dataChange of every version from
// from to the latest, in log order (what a streaming source reads after
// from). A commit missing from the log is a *GapError.
func (t *Table) AddedFrom(ctx context.Context, from int64) ([]AddedFile, error) {
	latest := t.log.Latest()
	if from < 0 {
		return nil, fmt.Errorf("version %d: want 0 or more", from)
	}
	if m := t.log.firstMissing(from, latest); m >= 0 {
		e := t.log.ContiguousFrom(latest)
		return nil, gapError(m, max(m, e-1), fmt.Sprintf("the files added from version %d on cannot be listed", from))
	}
	var out []AddedFile
	for v := from; v <= latest; v++ {
		acts, err := ReadCommit(ctx, t.store, v)
		if err != nil {
			return nil, err
		}
		for _, a := range acts {
			if a.Add != nil && a.Add.DataChange {
				out = append(out, AddedFile{Version: v, Add: *a.Add})
			}
		}
	}
	return out, nil
}
