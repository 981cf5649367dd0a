package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func TestReadSinkOwner(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if o, n, err := ReadSinkOwner(ctx, st); err != nil || o != nil || n != -1 {
		t.Fatalf("empty sink: %v %d %v", o, n, err)
	}
	first := SinkOwner{Version: 1, QueryID: "a", Checkpoint: "file:///a"}
	second := SinkOwner{Version: 1, QueryID: "b", Checkpoint: "file:///b", BatchOffset: 7, From: &SinkOwnerRef{QueryID: "a"}}
	for i, o := range []SinkOwner{first, second} {
		if _, err := st.Put(ctx, SinkOwnerKey(int64(i)), EncodeSinkOwner(o), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	// not an entry: ignored
	if _, err := st.Put(ctx, SinkOwnerDir+"/.1.tmp", []byte("x"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	o, n, err := ReadSinkOwner(ctx, st)
	if err != nil || n != 1 || o.QueryID != "b" || o.BatchOffset != 7 {
		t.Fatalf("got %+v %d %v, want owner b at entry 1", o, n, err)
	}
	if _, err := st.Put(ctx, SinkOwnerKey(2), []byte(`{"version":1,"query_id":"c"`), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	_, _, err = ReadSinkOwner(ctx, st)
	var ke *KeyError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ke) || ke.Key != SinkOwnerKey(2) {
		t.Fatalf("a cut record: got %v, want ErrCorrupt naming %s", err, SinkOwnerKey(2))
	}
	if _, err := st.Put(ctx, SinkOwnerKey(3), []byte(strings.Repeat(" ", maxSinkOwnerBytes+1)), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadSinkOwner(ctx, st); !errors.Is(err, gateway.ErrTooLarge) || !strings.Contains(err.Error(), SinkOwnerKey(3)) {
		t.Fatalf("a huge record: got %v, want ErrTooLarge naming it", err)
	}
}

func TestDecodeSinkOwnerRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"newer version":   `{"version":2,"query_id":"q","checkpoint":"c"}`,
		"no version":      `{"query_id":"q","checkpoint":"c"}`,
		"no query id":     `{"version":1,"checkpoint":"c"}`,
		"no checkpoint":   `{"version":1,"query_id":"q"}`,
		"unknown field":   `{"version":1,"query_id":"q","checkpoint":"c","owner":"x"}`,
		"trailing":        `{"version":1,"query_id":"q","checkpoint":"c"} {}`,
		"from without id": `{"version":1,"query_id":"q","checkpoint":"c","from":{}}`,
		"not json":        `query q`,
	} {
		if _, err := DecodeSinkOwner([]byte(in)); err == nil {
			t.Errorf("%s: accepted %s", name, in)
		}
	}
}
