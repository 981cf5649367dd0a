package gateway_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// understated announces a smaller size than it serves: an object that grew
// between the open and the read.
type understated struct{ gateway.Store }

func (u understated) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	rc, a, err := u.Store.GetStream(ctx, key)
	a.Size = 1
	return rc, a, err
}

func TestGetBounded(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	put := func(key string, n int) {
		if _, err := st.Put(ctx, key, []byte(strings.Repeat("x", n)), gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	put("offsets/0", 100)
	put("offsets/1", 101)
	data, v, err := gateway.GetBounded(ctx, st, "offsets/0", 100)
	if err != nil || len(data) != 100 || v == "" {
		t.Fatalf("at the bound: %d bytes, version %q, %v", len(data), v, err)
	}
	for _, s := range []gateway.Store{st, understated{st}} {
		_, _, err = gateway.GetBounded(ctx, s, "offsets/1", 100)
		var ge *gateway.Error
		if !errors.Is(err, gateway.ErrTooLarge) || !errors.As(err, &ge) || ge.Key != "offsets/1" {
			t.Errorf("one byte over: %v, want ErrTooLarge naming offsets/1", err)
		}
		if err == nil || !strings.Contains(err.Error(), "100 bytes") {
			t.Errorf("the error does not say the bound: %v", err)
		}
	}
	if _, _, err := gateway.GetBounded(ctx, st, "absent", 0); !errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("absent: %v", err)
	}
	if gateway.KindOf(gateway.E("get", "k", gateway.ErrTooLarge, nil)) != gateway.ErrTooLarge {
		t.Error("ErrTooLarge is not a kind")
	}
}

func TestLines(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	body := "v1\n{\"a\":1}\r\n\n" + strings.Repeat("y", 70000) + "\nlast"
	if _, err := st.Put(ctx, "sources/0/9.compact", []byte(body), gateway.None()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for l, err := range gateway.Lines(ctx, st, "sources/0/9.compact", 70000) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l))
	}
	want := []string{"v1", "{\"a\":1}\r", "", strings.Repeat("y", 70000), "last"}
	if !slices.Equal(got, want) {
		t.Errorf("lines %d, want %d", len(got), len(want))
	}
	var n int
	var last error
	for _, err := range gateway.Lines(ctx, st, "sources/0/9.compact", 69999) {
		n++
		last = err
	}
	if n != 4 || !errors.Is(last, gateway.ErrTooLarge) || !strings.Contains(last.Error(), `"sources/0/9.compact" line 4 is longer`) {
		t.Errorf("after %d yields: %v, want line 4 too long", n, last)
	}
	for _, body := range []string{"", "a\n"} {
		if _, err := st.Put(ctx, "k", []byte(body), gateway.None()); err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for l, err := range gateway.Lines(ctx, st, "k", 0) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(l))
		}
		if want := strings.Split(strings.TrimSuffix(body, "\n"), "\n"); body != "" && !slices.Equal(got, want) || body == "" && len(got) != 0 {
			t.Errorf("%q: lines %q", body, got)
		}
	}
}

// FuzzLines: streamed lines never exceed the bound, a too-long line is
// ErrTooLarge naming the key, and otherwise the lines are the body split
// at "\n" (without a last empty line), as the whole-file split gives.
func FuzzLines(f *testing.F) {
	f.Add([]byte("v1\n{\"path\":\"a\"}\n"), uint8(16))
	f.Add([]byte("v1\r\n\n\nxx"), uint8(1))
	f.Add([]byte(strings.Repeat("z", 300)), uint8(255))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, limit uint8) {
		ctx := context.Background()
		st := memstore.New()
		if _, err := st.Put(ctx, "sources/0/9.compact", body, gateway.None()); err != nil {
			t.Fatal(err)
		}
		max := int(limit) + 1
		var got []string
		for l, err := range gateway.Lines(ctx, st, "sources/0/9.compact", max) {
			if err != nil {
				if !errors.Is(err, gateway.ErrTooLarge) || !strings.Contains(err.Error(), `"sources/0/9.compact" line`) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if len(l) > max {
				t.Fatalf("a line of %d bytes, bound %d", len(l), max)
			}
			got = append(got, string(l))
		}
		var want []string
		if len(body) > 0 {
			want = strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("lines %q, want %q", got, want)
		}
	})
}
