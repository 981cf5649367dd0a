package sink

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ckgate/ckgate/engine/row"
)

// What the http sink sends decodes, field for field and nothing more, as
// the HTTPRequest its receivers read: the query, the batch, and each
// record under its key with the row as an object.
func TestHTTPRequestIsTheBody(t *testing.T) {
	h := &httpSink{env: Env{QueryID: "q-1"}}
	names := []string{"user", "n"}
	rows := []row.Row{
		{Names: names, Vals: []row.Value{row.StrV("u\"1"), row.IntV(3)}},
		{Names: names, Vals: []row.Value{row.StrV("u2"), row.IntV(-4)}},
	}
	dec := json.NewDecoder(bytes.NewReader(h.body(7, rows, 10)))
	dec.DisallowUnknownFields()
	var got HTTPRequest
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Query != "q-1" || got.Batch != 7 || len(got.Records) != 2 {
		t.Fatalf("request %+v", got)
	}
	for i, want := range []string{`{"user":"u\"1","n":3}`, `{"user":"u2","n":-4}`} {
		r := got.Records[i]
		if r.Key != RecordKey("q-1", 7, 10+i) || string(r.Record) != want {
			t.Errorf("record %d: %s %s, want %s %s", i, r.Key, r.Record, RecordKey("q-1", 7, 10+i), want)
		}
	}
}
