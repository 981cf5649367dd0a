package gateway_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

func FuzzParseWriterRecord(f *testing.F) {
	f.Add([]byte(`{"epoch":3,"query_id":"q","owner":"h:1","host":"h","pid":1,"since":"2026-11-30T12:00:00Z","heartbeat":"2026-11-30T12:00:10Z","lease_ms":30000,"write_id":"ab"}`))
	f.Add([]byte(`{"epoch":0}`))
	f.Add([]byte(`{"epoch":1,"owner":"x","write_id":"y","lease_ms":-5}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := gateway.ParseWriterRecord(data)
		if err != nil {
			return
		}
		if r.Epoch == 0 || r.WriteID == "" || r.Owner == "" {
			t.Fatalf("accepted an incomplete record %+v", r)
		}
		back, err := gateway.ParseWriterRecord(r.Encode())
		if err != nil || back.Epoch != r.Epoch || back.WriteID != r.WriteID {
			t.Fatalf("round trip of %+v: %+v, %v", r, back, err)
		}
	})
}

func FuzzEntryEpoch(f *testing.F) {
	f.Add([]byte("v1\n{\"batchWatermarkMs\":0,\"ckgateEpoch\":7}\n{\"logOffset\":3}\n"))
	f.Add([]byte("v1\n{\"nextBatchWatermarkMs\":0}"))
	f.Add([]byte("v1\n{\"ckgateEpoch\":-1}\n"))
	f.Add([]byte("v1\n{\"ckgateEpoch\":\"x\"}\n"))
	f.Add([]byte("{\"ckgateEpoch\":18446744073709551615}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = gateway.EntryEpoch("offsets/0", data)
	})
}

func FuzzValidateKey(f *testing.F) {
	for _, k := range []string{"offsets/0", "", "/abs", "a/../b", "a//b", "a/./b", "x/", ".0.crc", "日本/é", "a\x00b", "a\\b"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if gateway.ValidateKey("get", key) != nil {
			return
		}
		if key == "" || key[0] == '/' || len(key) > gateway.MaxKeyLen {
			t.Fatalf("accepted %q", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q with segment %q", key, seg)
			}
		}
	})
}
