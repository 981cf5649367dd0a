package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func TestCodecRoundTrip(t *testing.T) {
	h := Header{Version: 7, Depth: 3, ChainBytes: 120, SnapBytes: 999, Base: "6_abc.delta"}
	e := NewEncoder(h, 0)
	in := []Change{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Delete: true}, {Key: []byte("c"), Value: []byte{}}}
	for _, c := range in {
		e.Add(c)
	}
	data, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var out []Change
	got, err := Decode(data, func(c Change) error { out = append(out, c); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got != h {
		t.Fatalf("header %+v, want %+v", got, h)
	}
	if len(out) != 3 || string(out[0].Value) != "1" || !out[1].Delete || out[2].Value == nil || len(out[2].Value) != 0 {
		t.Fatalf("records %+v", out)
	}
	for _, c := range in {
		_ = c.EncodedSize()
	}
}

func TestEncoderRefuses(t *testing.T) {
	e := NewEncoder(Header{}, 0)
	e.Add(Change{Key: []byte("b")})
	e.Add(Change{Key: []byte("a")})
	if _, err := e.Finish(); err == nil {
		t.Fatal("keys out of order accepted")
	}
	e = NewEncoder(Header{Snapshot: true}, 0)
	e.Add(Change{Key: []byte("a"), Delete: true})
	if _, err := e.Finish(); err == nil {
		t.Fatal("delete in a snapshot accepted")
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	e := NewEncoder(Header{Version: 1}, 0)
	e.Add(Change{Key: []byte("k"), Value: []byte("v")})
	good, _ := e.Finish()
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		if _, err := Decode(bad, nil); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipping byte %d: %v, want ErrCorrupt", i, err)
		}
	}
	for n := range len(good) {
		if _, err := Decode(good[:n], nil); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

func TestFileNames(t *testing.T) {
	a, b := FileName(12, false), FileName(12, false)
	if a == b {
		t.Fatalf("two attempts got the same name %s", a)
	}
	v, snap, ok := ParseFileName(FileName(12, true))
	if !ok || v != 12 || !snap {
		t.Fatalf("ParseFileName: %d %v %v", v, snap, ok)
	}
	for _, n := range []string{"12.delta.tmp", "x_1.delta", "12_ab.zip", ""} {
		if _, _, ok := ParseFileName(n); ok {
			t.Errorf("ParseFileName(%q) ok", n)
		}
	}
}

// model applies changes to a map; the store must rebuild the same map
// from any tip, across snapshots.
func TestWriteLoadChains(t *testing.T) {
	for _, p := range []Policy{{Every: 1}, {Every: 3}, {Every: 4, Ratio: 1.5}, {Every: 1000}} {
		t.Run(fmt.Sprintf("every%d-ratio%v", p.Every, p.Ratio), func(t *testing.T) {
			ctx := context.Background()
			st := New(memstore.New(), 0, p)
			model := map[string]string{}
			var tip Tip
			snaps := 0
			for v := int64(1); v <= 25; v++ {
				var cs []Change
				for i := range 6 {
					k := fmt.Sprintf("k%02d", (int(v)*7+i*5)%23)
					if i == 5 && v%3 == 0 {
						if _, ok := model[k]; ok {
							delete(model, k)
							cs = append(cs, Change{Key: []byte(k), Delete: true})
						}
						continue
					}
					val := fmt.Sprintf("v%d-%d", v, i)
					if slices.ContainsFunc(cs, func(c Change) bool { return string(c.Key) == k }) {
						continue
					}
					model[k] = val
					cs = append(cs, Change{Key: []byte(k), Value: []byte(val)})
				}
				slices.SortFunc(cs, func(a, b Change) int { return bytes.Compare(a.Key, b.Key) })
				w, err := st.Write(ctx, 2, v, tip, cs, func(add func(Change)) {
					for _, k := range slices.Sorted(maps.Keys(model)) {
						add(Change{Key: []byte(k), Value: []byte(model[k])})
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if w.Tip.Snapshot {
					snaps++
				}
				tip = w.Tip
				got := map[string]string{}
				l, err := st.Load(ctx, 2, tip.Name, func(c Change) error {
					if c.Delete {
						delete(got, string(c.Key))
					} else {
						got[string(c.Key)] = string(c.Value)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(got, model) {
					t.Fatalf("version %d: loaded %v, want %v", v, got, model)
				}
				if l.Tip.Name != tip.Name || l.Tip.Depth != tip.Depth || l.Files > p.Every+1 && p.Ratio == 0 {
					t.Fatalf("version %d: loaded tip %+v (%d files), wrote %+v", v, l.Tip, l.Files, tip)
				}
				tip = l.Tip
			}
			if p.Every < 25 && snaps == 0 {
				t.Fatal("no snapshot written")
			}
			if p.Every == 1000 && snaps != 1 {
				t.Fatalf("%d snapshots, want only the first file (before K versions)", snaps)
			}
		})
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	st := New(ms, 3, Policy{})
	if _, err := st.Load(ctx, 1, "4_gone.delta", func(Change) error { return nil }); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	ms.Put(ctx, "state/3/1/5_bad.delta", []byte("CKGS garbage"), gateway.None())
	_, err := st.Load(ctx, 1, "5_bad.delta", func(Change) error { return nil })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "state/3/1/5_bad.delta") {
		t.Fatalf("corrupt file: %v", err)
	}
}

// FuzzDecode: Decode never panics, and what it accepts re-encodes to the
// same bytes.
func FuzzDecode(f *testing.F) {
	e := NewEncoder(Header{Version: 3, Depth: 2, ChainBytes: 40, SnapBytes: 100, Base: "2_x.delta"}, 0)
	e.Add(Change{Key: []byte("a"), Value: []byte("1")})
	e.Add(Change{Key: []byte("b"), Delete: true})
	d, _ := e.Finish()
	f.Add(d)
	s := NewEncoder(Header{Snapshot: true, Version: 9}, 0)
	s.Add(Change{Key: []byte{0, 1}, Value: bytes.Repeat([]byte{7}, 300)})
	sd, _ := s.Finish()
	f.Add(sd)
	f.Add([]byte("CKGS"))
	f.Add(make([]byte, 4096))                                 // a sparse file reads as zeros
	f.Add(append(d[:len(d)-5:len(d)-5], make([]byte, 64)...)) // a good header, then zeros
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []Change
		h, err := Decode(data, func(c Change) error { recs = append(recs, c); return nil })
		// Check, streaming, agrees with Decode on every input.
		ch, n, cerr := Check(bytes.NewReader(data))
		if (cerr == nil) != (err == nil) || err == nil && (ch != h || n != int64(len(data))) {
			t.Fatalf("Check: %+v %d %v; Decode: %+v %v", ch, n, cerr, h, err)
		}
		if cerr != nil && !errors.Is(cerr, ErrCorrupt) {
			t.Fatalf("Check error %v is not ErrCorrupt", cerr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		re := NewEncoder(h, 0)
		for _, c := range recs {
			re.Add(c)
		}
		out, err := re.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoding differs:\n%x\n%x", out, data)
		}
	})
}
