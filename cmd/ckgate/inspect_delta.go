package main

import (
	"fmt"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// lakeOffsetText is a Delta or Iceberg source offset in a table cell.
func lakeOffsetText(o checkpoint.SourceOffset) string {
	switch {
	case o.Delta != nil:
		return o.Delta.String()
	case o.Iceberg != nil:
		s := fmt.Sprintf("iceberg snapshot %d position %d", o.Iceberg.SnapshotID, o.Iceberg.Position)
		if o.Iceberg.ScanAllFiles {
			s += " (scan all files)"
		}
		return s
	}
	return o.Kind + " " + o.JSON
}
