package delta

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// classicRow is one row of a classic checkpoint N.checkpoint.parquet: the
// action columns Delta writes there. Unlike checkpointRow it has no
// checkpointMetadata or sidecar column, whose presence tells a reader the
// file is a v2 checkpoint.
type classicRow struct {
	Txn      *pqTxn      `parquet:"txn,optional"`
	Add      *pqAdd      `parquet:"add,optional"`
	Remove   *pqRemove   `parquet:"remove,optional"`
	MetaData *pqMetadata `parquet:"metaData,optional"`
	Protocol *pqProtocol `parquet:"protocol,optional"`
}

// marshalClassicCheckpoint returns a classic checkpoint holding actions
// (protocol, metaData, txn, add and remove only), one row each.
func marshalClassicCheckpoint(actions []Action) ([]byte, error) {
	rows := make([]classicRow, 0, len(actions))
	for i, a := range actions {
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("action %d: %w", i, err)
		}
		if a.CommitInfo != nil || a.CDC != nil || a.DomainMetadata != nil || a.CheckpointMetadata != nil || a.Sidecar != nil {
			return nil, fmt.Errorf("action %d: a classic checkpoint holds protocol, metaData, txn, add and remove actions only", i)
		}
		r := rowOf(a)
		rows = append(rows, classicRow{Txn: r.Txn, Add: r.Add, Remove: r.Remove, MetaData: r.MetaData, Protocol: r.Protocol})
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[classicRow](&buf, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		return nil, fmt.Errorf("checkpoint parquet: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("checkpoint parquet: %w", err)
	}
	return buf.Bytes(), nil
}
