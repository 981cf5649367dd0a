package gateway_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// A CountingReader handed to PutStream holds the stored size afterwards.
func TestCountingReader(t *testing.T) {
	body := strings.Repeat("x", 70000)
	cr := &gateway.CountingReader{R: io.MultiReader(strings.NewReader(body[:3]), strings.NewReader(body[3:]))}
	ms := memstore.New()
	if _, err := ms.PutStream(context.Background(), "k", cr, gateway.None()); err != nil {
		t.Fatal(err)
	}
	a, err := ms.Stat(context.Background(), "k")
	if err != nil || cr.N != int64(len(body)) || a.Size != cr.N {
		t.Fatalf("counted %d, stored %d (%v); want %d", cr.N, a.Size, err, len(body))
	}
}
