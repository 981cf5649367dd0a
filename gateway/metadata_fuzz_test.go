package gateway_test

import (
	"encoding/json"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// FuzzParseMetadataID: any bytes give an id or an error, never both, and
// an accepted file's id survives a re-encoding.
func FuzzParseMetadataID(f *testing.F) {
	f.Add([]byte(`{"id":"dddc5e7f-1e71-454c-8362-de184444fb5a"}`))
	f.Add([]byte(`{"id":""}`))
	f.Add([]byte(`{"id":null}`))
	f.Add([]byte("{\n  \"id\" : \"d366a8bf-db79-42ca-b5a4-d9ca0a11d63e\"\n}"))
	f.Add([]byte(`{"id":"a"} }`))
	f.Add([]byte(`{"id":"\ud800"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := gateway.ParseMetadataID(data)
		if err != nil {
			if id != "" {
				t.Fatalf("error %v with id %q", err, id)
			}
			return
		}
		enc, err := json.Marshal(map[string]string{"id": id})
		if err != nil {
			t.Fatal(err)
		}
		again, err := gateway.ParseMetadataID(enc)
		if err != nil || again != id {
			t.Fatalf("id %q re-encoded: %q, %v", id, again, err)
		}
	})
}
