package checkpointtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// writeN puts n files f-0 … f-(n-1), each holding its name.
func writeN(n int) func(put func(key string, data []byte)) int {
	return func(put func(key string, data []byte)) int {
		for i := range n {
			k := fmt.Sprintf("f-%d", i)
			put(k, []byte(k))
		}
		return n
	}
}

// TestPutAll: every file write gives is in the store with its bytes, and
// the count is write's.
func TestPutAll(t *testing.T) {
	st := memstore.New()
	files, err := PutAll(t.Context(), st, 4, writeN(100))
	if err != nil || files != 100 {
		t.Fatalf("PutAll = %d, %v", files, err)
	}
	for i := range 100 {
		k := fmt.Sprintf("f-%d", i)
		if b, _, err := st.Get(t.Context(), k); err != nil || string(b) != k {
			t.Errorf("%s: %q, %v", k, b, err)
		}
	}
}

// TestPutAllError: a failed put (f-7, the one key of its prefix) is the error PutAll returns, naming its key.
func TestPutAllError(t *testing.T) {
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "f-7", Nth: 1, Action: gateway.FailBefore})
	_, err := PutAll(t.Context(), f.Wrap(memstore.New()), 4, writeN(50))
	if !errors.Is(err, gateway.ErrUnavailable) || !strings.HasPrefix(err.Error(), "put f-7: ") {
		t.Fatalf("PutAll error = %v; want put f-7: unavailable", err)
	}
}
