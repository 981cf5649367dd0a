package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// icebergMeta is a table metadata file in the shape Iceberg's
// TableMetadataParser writes (no real Iceberg table is available here):
// snapshots 1 ← 2 ← 3 (current), and 9, a rolled-back branch off 1.
const icebergMeta = `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://b/t","last-sequence-number":4,
"current-snapshot-id":3,"snapshots":[
{"snapshot-id":1,"timestamp-ms":1,"manifest-list":"m1.avro"},
{"snapshot-id":2,"parent-snapshot-id":1,"timestamp-ms":2,"manifest-list":"m2.avro"},
{"snapshot-id":9,"parent-snapshot-id":1,"timestamp-ms":3,"manifest-list":"m9.avro"},
{"snapshot-id":3,"parent-snapshot-id":2,"timestamp-ms":4,"manifest-list":"m3.avro"}]}`

func TestIcebergResume(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	for k, v := range map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"table-uuid":"old","current-snapshot-id":-1,"snapshots":[]}`,
		"metadata/v2.metadata.json": icebergMeta, "metadata/version-hint.text": "2\n"} {
		if _, err := s.Put(ctx, k, []byte(v), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ReadIcebergMetadata(ctx, s)
	if err != nil || m.Key != "metadata/v2.metadata.json" || m.TableUUID != "9c12d441-03fe-4693-9a96-a0705ddf69c1" {
		t.Fatalf("%+v, %v", m, err)
	}
	for id, want := range map[int64]string{3: GapOK, 1: GapOK, 9: GapIdentityChanged, 7: GapExpired} {
		if g := CheckIcebergResume(m, checkpoint.IcebergSourceOffset{Version: 1, SnapshotID: id}); g.Status != want {
			t.Errorf("snapshot %d: %+v; want %s", id, g, want)
		}
	}
	// without a version hint the highest-numbered metadata file is current
	s2 := memstore.New()
	for k, v := range map[string]string{"metadata/00001-a.metadata.json": `{"format-version":2,"table-uuid":"u","snapshots":[]}`, "metadata/00002-b.metadata.json": icebergMeta} {
		s2.Put(ctx, k, []byte(v), gateway.IfAbsent())
	}
	if m, err := ReadIcebergMetadata(ctx, s2); err != nil || m.Key != "metadata/00002-b.metadata.json" {
		t.Fatalf("%+v, %v", m, err)
	}
	if _, err := ReadIcebergMetadata(ctx, memstore.New()); !errors.Is(err, ErrNotIceberg) {
		t.Errorf("empty: %v", err)
	}
	if _, err := ParseIcebergMetadata("metadata/v3.metadata.json", []byte(`{"snapshots":[]}`)); !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Errorf("no format-version: %v", err)
	}
}
